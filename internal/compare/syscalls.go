package compare

import (
	"context"
	"time"

	"github.com/otelbench/otelbench/internal/profile"
)

// syscallTrace counts the server's syscalls while the load runs.
type syscallTrace struct {
	done  chan struct{}
	stopf context.CancelFunc
	total uint64
	err   error
}

// startSyscallTrace starts counting pid's syscalls until stop; when enabled
// is false it is a no-op that counts nothing.
func startSyscallTrace(ctx context.Context, enabled bool, pid int) *syscallTrace {
	t := &syscallTrace{done: make(chan struct{}), stopf: func() {}}
	if !enabled {
		close(t.done)
		return t
	}
	ctx, t.stopf = context.WithCancel(ctx)
	go func() { // owned by t: ends when stop cancels ctx
		defer close(t.done)
		t.total, t.err = traceSyscalls(ctx, pid)
	}()
	select {
	case <-time.After(attachGrace):
	case <-t.done: // failed to attach: stop reports why
	case <-ctx.Done():
	}
	return t
}

// stop ends the trace and returns the syscalls counted.
func (t *syscallTrace) stop() (uint64, error) {
	t.stopf()
	<-t.done
	return t.total, t.err
}

// attachGrace is how long a round waits after starting the tracer before
// it starts the load: TraceSyscalls attaches synchronously and does not say
// when it is done, so without the wait the first requests of a round would
// go uncounted (by a varying amount). The idle server's own syscalls in this
// window are counted on both sides alike.
const attachGrace = 500 * time.Millisecond

// traceSyscalls counts pid's syscalls until ctx is done.
func traceSyscalls(ctx context.Context, pid int) (uint64, error) {
	rep, err := profile.TraceSyscalls(ctx, profile.SyscallConfig{Target: profile.Target{PID: pid}})
	if err != nil {
		return 0, err
	}
	return rep.Total(), nil
}
