package loadgen

import (
	"context"
	"errors"
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

// Pacer hands out the intended send times of an open model: at a constant
// rate send n is due at start + n/rate; with stages, when the integral of the
// ramped rate reaches n. It holds no state beyond its arguments, so concurrent
// workers share one Pacer and draw send numbers from a counter.
type Pacer struct {
	start time.Time
	sched schedule
	clock Clock
}

// ErrScheduleEnd is returned by Pacer.Wait for a send past the end of the stages.
var ErrScheduleEnd = errors.New("past the end of the rate schedule")

// NewPacer returns a Pacer for rate sends per second from start.
func NewPacer(clock Clock, start time.Time, rate float64) *Pacer {
	return &Pacer{start: start, sched: newSchedule(rate, nil), clock: clock}
}

// NewStagedPacer returns a Pacer whose rate follows stages from start.
func NewStagedPacer(clock Clock, start time.Time, stages []Stage) *Pacer {
	return &Pacer{start: start, sched: newSchedule(0, stages), clock: clock}
}

// At returns the intended send time of send n (n counts from 0); past the end
// of stages it returns the start (see Due).
func (p *Pacer) At(n int64) time.Time {
	t, _ := p.Due(n)
	return t
}

// Due returns the intended send time of send n, and false when the schedule
// ends before it.
func (p *Pacer) Due(n int64) (time.Time, bool) {
	d, ok := p.sched.at(n)
	return p.start.Add(d), ok
}

// Wait sleeps until the intended time of send n and returns it, with the
// lateness: how far behind schedule the clock was when Wait returned (0 when
// on time). It returns ctx.Err() if ctx ends first, ErrScheduleEnd if the
// schedule ends before send n.
func (p *Pacer) Wait(ctx context.Context, n int64) (intended time.Time, late time.Duration, err error) {
	intended, ok := p.Due(n)
	if !ok {
		return intended, 0, ErrScheduleEnd
	}
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
