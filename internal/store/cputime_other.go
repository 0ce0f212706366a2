//go:build !linux

package store

import (
	"errors"
	"runtime"
	"time"
)

// readCPUTimes is not implemented off Linux: projection is then never deferred.
func readCPUTimes() (cpuTimes, error) {
	return cpuTimes{}, errors.New("machine cpu times are not read on " + runtime.GOOS)
}

// threadCPU is not implemented off Linux.
func threadCPU() (time.Duration, error) {
	return 0, errors.New("thread cpu time is not read on " + runtime.GOOS)
}
