package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/logwriter"
)

// progress owns the mpb container of a run, in the pattern of `load`'s
// (internal/loadgen/progress.go); its zero value displays nothing.
type progress struct {
	p    *mpb.Progress
	bars []*mpb.Bar
	done chan struct{}
}

// startProgress shows the elapsed time against the writing time, and one
// line with lines written, received and not yet received, until ctx ends.
func startProgress(ctx context.Context, w io.Writer, total time.Duration, wr *logwriter.Writer, acc *linesink.Accounting) *progress {
	if w == nil {
		return &progress{}
	}
	pr := &progress{p: mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithRefreshRate(250*time.Millisecond), mpb.WithWidth(40)),
		done: make(chan struct{})}
	start := time.Now()
	ms := max(total.Milliseconds(), 1)
	elapsed := pr.p.New(ms, mpb.BarStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name("elapsed", decor.WCSyncSpaceR),
			decor.Any(func(decor.Statistics) string { return time.Since(start).Truncate(100 * time.Millisecond).String() })),
		mpb.AppendDecorators(decor.Percentage()))
	lines := pr.p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Name("lines", decor.WCSyncSpaceR),
		decor.Any(func(decor.Statistics) string {
			n, got := wr.Lines(), acc.Distinct()
			secs := max(time.Since(start).Seconds(), 1e-3)
			return fmt.Sprintf("%10d written  %10d received  %8d in flight  %8.0f lines/s", n, got, max(n-got, 0), float64(got)/secs)
		})))
	pr.bars = []*mpb.Bar{elapsed, lines}
	go func() { // owned: ends with ctx, waited for by wait
		defer close(pr.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				elapsed.SetCurrent(min(time.Since(start).Milliseconds(), ms-1))
			}
		}
	}()
	return pr
}

// wait completes the bars and waits for the display to stop; the ctx given
// to startProgress must be done.
func (pr *progress) wait() {
	if pr.p == nil {
		return
	}
	<-pr.done
	for _, b := range pr.bars {
		b.Abort(false)
	}
	pr.p.Wait()
}
