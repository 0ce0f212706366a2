package store

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// readCPUTimes reads the machine's CPU times from /proc/stat (the aggregate line: busy is user,
// nice, system, irq, softirq and steal; total adds idle and iowait) and the calling thread's
// from CLOCK_THREAD_CPUTIME_ID.
func readCPUTimes() (cpuTimes, error) {
	var t cpuTimes
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return t, fmt.Errorf("read machine cpu times: %w", err)
	}
	st, err := fs.Stat()
	if err != nil {
		return t, fmt.Errorf("read machine cpu times: %w", err)
	}
	c := st.CPUTotal
	secs := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	t.busy = secs(c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal)
	t.total = t.busy + secs(c.Idle+c.Iowait)
	if t.self, err = threadCPU(); err != nil {
		return t, err
	}
	return t, nil
}

// threadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("read thread cpu time: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
