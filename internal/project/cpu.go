package project

import "time"

// CPUTimes are cumulative CPU times: Busy and Total over every CPU of the machine (Total
// includes idle), and Self, the calling thread's own CPU time.
type CPUTimes struct {
	Busy, Total, Self time.Duration
}

// CPUSource reads CPUTimes. Machine is the production source; tests inject their own, so that
// the policy's decisions do not depend on the host (a container with a CPU quota sees the
// whole machine in /proc/stat).
type CPUSource interface {
	Read() (CPUTimes, error)
}

// Machine reads the machine-wide CPU times from /proc/stat and the calling thread's from
// CLOCK_THREAD_CPUTIME_ID (Linux; elsewhere Read fails and the projector never defers).
type Machine struct{}

// Clock is the time the policy's windows run on.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
