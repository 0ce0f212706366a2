package compare

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress is a bar across all runs of the schedule; with a nil writer
// every method is a no-op.
type progress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	desc atomic.Pointer[string]
}

func newProgress(ctx context.Context, w io.Writer, total int) *progress {
	pr := &progress{}
	if w == nil {
		return pr
	}
	empty := ""
	pr.desc.Store(&empty)
	pr.p = mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(80), mpb.WithAutoRefresh())
	pr.bar = pr.p.AddBar(int64(total),
		mpb.PrependDecorators(
			decor.Name("compare ", decor.WC{}),
			decor.Any(func(decor.Statistics) string { return *pr.desc.Load() }, decor.WC{W: 18, C: decor.DindentRight}),
		),
		mpb.AppendDecorators(
			decor.CountersNoUnit("%d/%d runs ", decor.WC{}),
			decor.Elapsed(decor.ET_STYLE_MMSS, decor.WC{}),
		),
	)
	return pr
}

func (pr *progress) describe(s string) {
	if pr.p != nil {
		pr.desc.Store(&s)
	}
}

func (pr *progress) increment() {
	if pr.p != nil {
		pr.bar.Increment()
	}
}

// close stops the bar (aborted if the schedule did not finish) and waits
// for the renderer to exit.
func (pr *progress) close() {
	if pr.p == nil {
		return
	}
	if !pr.bar.Completed() {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
}
