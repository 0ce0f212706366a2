package compare

import (
	"context"
	"time"

	"github.com/otelbench/otelbench/internal/profile"
)

// attachTimeout bounds the wait for the syscall tracer to go live.
const attachTimeout = 30 * time.Second

// syscallTrace counts the server's syscalls while the load runs.
type syscallTrace struct {
	done  chan struct{}
	stopf context.CancelFunc
	total uint64
	err   error
}

// startSyscallTrace starts counting pid's syscalls and returns once the
// tracer is attached (so the load's first requests are counted), has
// failed, or ctx ends. When enabled is false it is a no-op that counts
// nothing.
func startSyscallTrace(ctx context.Context, enabled bool, pid int) *syscallTrace {
	t := &syscallTrace{done: make(chan struct{}), stopf: func() {}}
	if !enabled {
		close(t.done)
		return t
	}
	ctx, t.stopf = context.WithCancel(ctx)
	attached := make(chan struct{})
	cfg := profile.SyscallConfig{Target: profile.Target{PID: pid}}
	cfg.Attached = func(int) { close(attached) }
	go func() { // owned by t: ends when stop cancels ctx
		defer close(t.done)
		rep, err := profile.TraceSyscalls(ctx, cfg)
		if err != nil {
			t.err = err
			return
		}
		t.total = rep.Total()
	}()
	wait := time.NewTimer(attachTimeout)
	defer wait.Stop()
	select {
	case <-attached:
	case <-t.done: // failed to attach: stop reports why
	case <-ctx.Done():
	case <-wait.C:
	}
	return t
}

// stop ends the trace and returns the syscalls counted.
func (t *syscallTrace) stop() (uint64, error) {
	t.stopf()
	<-t.done
	return t.total, t.err
}
