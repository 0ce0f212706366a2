// Package progress is the live terminal display of a timed run (`load`, `pipeline`): a bar of
// the time elapsed against the run's planned duration, and lines of counters that the run
// updates without locks, redrawn four times a second until the run's context ends.
package progress

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// refresh is how often the display is redrawn and the elapsed bar moved.
const refresh = 250 * time.Millisecond

// Display is one run's display. Its zero value, what Start returns for a nil writer, shows
// nothing and every method is a no-op.
type Display struct {
	p     *mpb.Progress
	start time.Time
	bars  []*mpb.Bar
	done  chan struct{} // closed when the ticker goroutine returned
}

// Start shows the elapsed line, with a percentage of total when total > 0 (a run bounded by
// something else, a request count, shows only the time), until ctx is done. A nil w shows
// nothing.
func Start(ctx context.Context, w io.Writer, total time.Duration) *Display {
	return start(ctx, w, total)
}

// start is Start with more container options: a test's buffer is no terminal, which mpb draws
// on only with WithAutoRefresh.
func start(ctx context.Context, w io.Writer, total time.Duration, opts ...mpb.ContainerOption) *Display {
	if w == nil {
		return &Display{}
	}
	opts = append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithRefreshRate(refresh), mpb.WithWidth(40)}, opts...)
	d := &Display{p: mpb.NewWithContext(ctx, opts...), start: time.Now(), done: make(chan struct{})}
	ms := max(total.Milliseconds(), 0)
	elapsed := d.p.New(ms, mpb.BarStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name("elapsed", decor.WCSyncSpaceR),
			decor.Any(func(decor.Statistics) string { return time.Since(d.start).Truncate(100 * time.Millisecond).String() })),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			if ms == 0 {
				return ""
			}
			return fmt.Sprintf("%3.0f%%", 100*float64(min(time.Since(d.start).Milliseconds(), ms))/float64(ms))
		})))
	d.bars = append(d.bars, elapsed)
	go func() { // owned: ends with ctx, waited for by Wait
		defer close(d.done)
		t := time.NewTicker(refresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if ms > 0 {
					// Short of complete: completing the bar would clear it before the run ends.
					elapsed.SetCurrent(min(time.Since(d.start).Milliseconds(), ms-1))
				}
			}
		}
	}()
	return d
}

// Line adds a line named name whose text is text(elapsed), read at each redraw: text reads the
// run's counters, which must be safe to read while the run updates them (atomics).
func (d *Display) Line(name string, text func(elapsed time.Duration) string) {
	if d.p == nil {
		return
	}
	d.bars = append(d.bars, d.p.New(0, mpb.NopStyle(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR),
			decor.Any(func(decor.Statistics) string { return text(time.Since(d.start)) }))))
}

// PerSecond is n over elapsed, for a rate on a line; elapsed is taken as at least a millisecond.
func PerSecond(n int64, elapsed time.Duration) float64 {
	return float64(n) / max(elapsed.Seconds(), 1e-3)
}

// Wait ends the bars and waits for the display to stop; the ctx given to Start must be done.
func (d *Display) Wait() {
	if d.p == nil {
		return
	}
	<-d.done
	for _, b := range d.bars {
		b.Abort(false)
	}
	d.p.Wait()
}
