package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// schedIdle is SCHED_IDLE (linux/sched.h).
const schedIdle = 5

// setThreadPriority sets the calling thread's scheduling priority.
func setThreadPriority(p Priority) error {
	switch p {
	case PriorityLow:
		if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19); err != nil {
			return fmt.Errorf("set projector thread to nice 19: %w", err)
		}
	case PriorityIdle:
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedIdle}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			return fmt.Errorf("set projector thread to SCHED_IDLE: %w", err)
		}
	}
	return nil
}

// onMainThread reports whether the calling thread is the process's main thread.
func onMainThread() bool { return unix.Gettid() == unix.Getpid() }
