//go:build !linux

package bench

import "errors"

// ErrNotSupported is returned where /proc is not available.
var ErrNotSupported = errors.New("bench: process figures need Linux /proc")

func peakRSS() (int64, error)           { return 0, ErrNotSupported }
func cpuSeconds() (float64, error)      { return 0, ErrNotSupported }
func machineTimes() (machineCPU, error) { return machineCPU{}, ErrNotSupported }
