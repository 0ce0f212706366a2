//go:build !race

package ingestsrv

const raceEnabled = false
