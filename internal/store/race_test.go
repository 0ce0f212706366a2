//go:build race

package store

// raceEnabled: the race detector's shadow memory inflates RSS, so memory bounds are not checked.
const raceEnabled = true
