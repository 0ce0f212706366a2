package query

import (
	"context"
	"fmt"
	"time"
)

// Heavy query limits. A trace tree and a metric series can each cost tens of
// megabytes and seconds of CPU (a 350,000-span trace built ~88 MB of JSON;
// a series over exponential histograms of 1.3M buckets took 1.8 s), so only
// a few run at once and the rest wait briefly, then get ErrBusy.
const (
	// DefaultHeavyQueries is how many trace and series reads run at once.
	DefaultHeavyQueries = 2
	// DefaultHeavyWait is how long a heavy read waits for a slot.
	DefaultHeavyWait = 5 * time.Second
)

// heavyGate admits a bounded number of heavy reads.
type heavyGate struct {
	slots chan struct{}
	wait  time.Duration
}

func newHeavyGate(n int, wait time.Duration) *heavyGate {
	return &heavyGate{slots: make(chan struct{}, positiveOr(n, DefaultHeavyQueries)), wait: positiveOr(wait, DefaultHeavyWait)}
}

// acquire takes a slot, waiting up to g.wait; release it with the returned
// func. ErrBusy when none frees in time.
func (g *heavyGate) acquire(ctx context.Context) (func(), error) {
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("%w: %d trace or series queries already running; retry shortly", ErrBusy, cap(g.slots))
	}
}

func (g *heavyGate) release() { <-g.slots }

// WithHeavyLimit makes r run at most n trace and series reads at once,
// each waiting up to wait for a slot before failing with ErrBusy (0 takes
// DefaultHeavyQueries, DefaultHeavyWait).
func (r *Reader) WithHeavyLimit(n int, wait time.Duration) *Reader {
	r.heavy = newHeavyGate(n, wait)
	return r
}
