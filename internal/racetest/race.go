//go:build race

package racetest

// Enabled: the tests run with -race.
const Enabled = true
