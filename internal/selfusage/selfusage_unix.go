//go:build unix

package selfusage

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// CPU returns the user+system CPU time this process has used.
func CPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// PeakRSS returns the process's peak resident set in bytes: ru_maxrss, which Linux keeps equal to
// VmHWM in /proc/self/status. It covers the whole life of the process, so a benchmark that reports
// it should run alone in its process.
func PeakRSS() (int64, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss, nil // bytes there; KiB on Linux and the BSDs
	}
	return ru.Maxrss << 10, nil
}
