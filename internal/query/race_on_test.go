//go:build race

package query

// raceEnabled: the race detector multiplies allocation and time, so the
// heap-bound tests, whose figures would not be the program's, skip.
const raceEnabled = true
