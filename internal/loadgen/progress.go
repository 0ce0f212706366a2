package loadgen

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/otelbench/otelbench/internal/progress"
)

// startProgress shows the elapsed time and one line per signal of the mix (requests, req/s,
// errors), refreshed until ctx is done. A nil w shows nothing.
func startProgress(ctx context.Context, w io.Writer, r *runner) *progress.Display {
	d := progress.Start(ctx, w, r.cfg.Duration)
	for _, sig := range r.cfg.Mix.Signals() {
		a := r.acc[sig.Index()]
		d.Line(sig.String(), func(elapsed time.Duration) string {
			n := a.liveRequests.Load()
			return fmt.Sprintf("%10d req  %9.0f req/s  %8d errors", n, progress.PerSecond(n, elapsed), a.liveErrors.Load())
		})
	}
	return d
}
