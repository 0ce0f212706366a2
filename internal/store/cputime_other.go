//go:build !linux

package store

import (
	"errors"
	"runtime"
)

// readCPUTimes is not implemented off Linux: projection is then never deferred.
func readCPUTimes() (cpuTimes, error) {
	return cpuTimes{}, errors.New("machine cpu times are not read on " + runtime.GOOS)
}
