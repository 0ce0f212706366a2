package project

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// SchedIdle is SCHED_IDLE (linux/sched.h), the policy of the projector's thread.
const SchedIdle = 5

// lowerThread puts the calling thread under SCHED_IDLE.
func lowerThread() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: SchedIdle}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("set projector thread to SCHED_IDLE: %w", err)
	}
	return nil
}

// onMainThread reports whether the calling thread is the process's main thread.
func onMainThread() bool { return unix.Gettid() == unix.Getpid() }
