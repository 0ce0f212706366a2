//go:build !linux

package bench

import "errors"

// ErrNotSupported is returned where /proc is not available.
var ErrNotSupported = errors.New("bench: process figures need Linux /proc")

func machineTimes() (machineCPU, error) { return machineCPU{}, ErrNotSupported }
