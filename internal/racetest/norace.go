//go:build !race

// Package racetest tells a test whether it runs under the race detector, which multiplies a
// process's memory (shadow memory, bigger allocations) and time: memory bounds and heap figures
// do not hold under it, and a child binary the test builds should be built with -race too.
package racetest

// Enabled: the tests run with -race.
const Enabled = false
