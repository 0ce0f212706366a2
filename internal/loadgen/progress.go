package loadgen

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress owns the mpb container of a run; its zero value displays nothing.
type progress struct {
	p    *mpb.Progress
	bars []*mpb.Bar
	done chan struct{} // closed when the ticker goroutine returned
}

// startProgress shows one line per signal of the mix (requests, req/s,
// errors) and one with the elapsed time, refreshed until ctx is done. A nil
// w shows nothing.
func startProgress(ctx context.Context, w io.Writer, r *runner) *progress {
	if w == nil {
		return &progress{}
	}
	pr := &progress{p: mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithRefreshRate(250*time.Millisecond),
		mpb.WithWidth(40))}
	start := time.Now()
	total := int64(0)
	if r.cfg.Duration > 0 {
		total = int64(r.cfg.Duration / time.Millisecond)
	}
	elapsed := pr.p.New(total, mpb.BarStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name("elapsed", decor.WCSyncSpaceR),
			decor.Any(func(decor.Statistics) string { return time.Since(start).Truncate(100 * time.Millisecond).String() })),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
			if total > 0 {
				d := time.Since(start).Milliseconds()
				return fmt.Sprintf("%3.0f%%", 100*float64(min(d, total))/float64(total))
			}
			return ""
		})))
	pr.bars = append(pr.bars, elapsed)
	pr.done = make(chan struct{})
	go func() { // owned: ends with ctx, waited for by wait
		defer close(pr.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if total > 0 {
					elapsed.SetCurrent(min(time.Since(start).Milliseconds(), total-1))
				}
			}
		}
	}()
	for _, sig := range r.cfg.Mix.Signals() {
		a := r.acc[sig.Index()]
		name := sig.String()
		pr.bars = append(pr.bars, pr.p.New(0, mpb.NopStyle(),
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR),
				decor.Any(func(decor.Statistics) string {
					n := a.liveRequests.Load()
					secs := max(time.Since(start).Seconds(), 1e-3)
					return fmt.Sprintf("%10d req  %9.0f req/s  %8d errors", n, float64(n)/secs, a.liveErrors.Load())
				}))))
	}
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
