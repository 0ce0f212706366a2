package loadgen

import (
	"context"
	"time"
)

// Clock is the time source of the Pacer; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, and returns ctx.Err() in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pacer hands out the intended send times of a constant-rate open model:
// send n is due at start + n/rate. It holds no state beyond its arguments,
// so concurrent workers share one Pacer and draw send numbers from a counter.
type Pacer struct {
	start    time.Time
	interval float64 // nanoseconds between sends
	clock    Clock
}

// NewPacer returns a Pacer for rate sends per second from start.
func NewPacer(clock Clock, start time.Time, rate float64) *Pacer {
	return &Pacer{start: start, interval: float64(time.Second) / rate, clock: clock}
}

// At returns the intended send time of send n (n counts from 0).
func (p *Pacer) At(n int64) time.Time {
	return p.start.Add(time.Duration(float64(n) * p.interval))
}

// Wait sleeps until the intended time of send n and returns it, with the
// lateness: how far behind schedule the clock was when Wait returned (0 when
// on time). It returns ctx.Err() if ctx ends first.
func (p *Pacer) Wait(ctx context.Context, n int64) (intended time.Time, late time.Duration, err error) {
	intended = p.At(n)
	if d := intended.Sub(p.clock.Now()); d > 0 {
		if err := p.clock.Sleep(ctx, d); err != nil {
			return intended, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return intended, 0, err
	}
	return intended, max(0, p.clock.Now().Sub(intended)), nil
}

// RealClock is the wall clock, for callers outside this package that pace
// with a Pacer (the pipeline log writer).
var RealClock Clock = realClock{}
