//go:build race

package ingestsrv

// raceEnabled: the race detector multiplies a process's memory (shadow
// memory, bigger allocations), so peak-RSS bounds do not apply.
const raceEnabled = true
