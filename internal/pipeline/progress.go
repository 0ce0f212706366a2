package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/logwriter"
	"github.com/otelbench/otelbench/internal/progress"
)

// startProgress shows the elapsed time against the writing time, and one line with lines
// written, received and not yet received, until ctx ends. A nil w shows nothing.
func startProgress(ctx context.Context, w io.Writer, total time.Duration, wr *logwriter.Writer, acc *linesink.Accounting) *progress.Display {
	d := progress.Start(ctx, w, total)
	d.Line("lines", func(elapsed time.Duration) string {
		n, got := wr.Lines(), acc.Distinct()
		return fmt.Sprintf("%10d written  %10d received  %8d in flight  %8.0f lines/s",
			n, got, max(n-got, 0), progress.PerSecond(got, elapsed))
	})
	return d
}
