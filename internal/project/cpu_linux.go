package project

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Read reads the machine's CPU times from /proc/stat (the aggregate line: busy is user,
// nice, system, irq, softirq and steal; total adds idle and iowait) and the calling thread's
// from CLOCK_THREAD_CPUTIME_ID.
func (Machine) Read() (CPUTimes, error) {
	var t CPUTimes
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
	t.Busy = secs(c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal)
	t.Total = t.Busy + secs(c.Idle+c.Iowait)
	if t.Self, err = ThreadCPU(); err != nil {
		return t, err
	}
	return t, nil
}

// ThreadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func ThreadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("read thread cpu time: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
