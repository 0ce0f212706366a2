//go:build !linux

package project

import (
	"errors"
	"runtime"
	"time"
)

// Read is not implemented off Linux: projection is then never deferred.
func (Machine) Read() (CPUTimes, error) {
	return CPUTimes{}, errors.New("machine cpu times are not read on " + runtime.GOOS)
}

// ThreadCPU is not implemented off Linux.
func ThreadCPU() (time.Duration, error) {
	return 0, errors.New("thread cpu time is not read on " + runtime.GOOS)
}
