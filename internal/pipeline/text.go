package pipeline

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/otelbench/otelbench/internal/linesink"
)

// WriteText writes the report as a human-readable table.
func (r *Report) WriteText(w io.Writer) error {
	c := r.Config
	fmt.Fprintf(w, "otelbench pipeline: %d files, %.0f lines/s, %s lines of %s bytes, %s layout", c.Files, c.Rate, c.Format, c.LineBytes, c.Layout)
	if c.RotateEvery > 0 {
		fmt.Fprintf(w, ", rotate every %gs by %s (keep %d)", c.RotateEvery, c.RotateMode, c.Keep)
	}
	fmt.Fprintf(w, ", sink %s, %.1fs + %.1fs drain", c.Sink, r.DurationSeconds, r.DrainSeconds)
	if r.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "writer: %d lines, %d bytes, %.0f lines/s, %d late (max lag %.1f ms), %d writes\n",
		r.Writer.Lines, r.Writer.Bytes, r.Writer.LinesPerSecond, r.Writer.LateLines, r.Writer.MaxLagMs, r.Writer.Writes)
	fmt.Fprintf(w, "sink: %d requests, %d unparseable records, %d foreign lines\n\n", r.Sink.Requests, r.Sink.Unparseable, r.Sink.Foreign)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stream\twritten\treceived\tmissing\tdup\tout of order\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	row := func(name string, s linesink.StreamStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", name, s.Written, s.Received, s.Missing,
			s.Duplicates, s.OutOfOrder, s.Latency.P50, s.Latency.P99, s.Latency.P999, s.Latency.Max)
	}
	if len(r.Streams) <= 16 {
		for _, s := range r.Streams {
			row(fmt.Sprint(s.Stream), s)
		}
	}
	row("total", r.Totals)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintln(w)

	a := r.Agent
	fmt.Fprintf(w, "agent pid %d: %.3f s CPU (%.3f user, %.3f sys) = %.4f s per 1,000 lines; peak RSS %.1f MiB; up to %d fds",
		a.PID, a.CPUUserSeconds+a.CPUSystemSeconds, a.CPUUserSeconds, a.CPUSystemSeconds, a.CPUPer1000Lines,
		float64(a.PeakRSSBytes)/(1<<20), a.FDsMax)
	if a.ExitCode != nil {
		fmt.Fprintf(w, "; exit %d", *a.ExitCode)
	}
	fmt.Fprintln(w)
	if a.Error != "" {
		fmt.Fprintf(w, "agent figures: %s\n", a.Error)
	}
	if s := a.Syscalls; s != nil {
		fmt.Fprintf(w, "agent syscalls: %d = %.2f per line", s.Total, s.PerLine)
		for i, n := range s.ByName {
			if i == 8 {
				break
			}
			fmt.Fprintf(w, "; %s %.2f", n.Name, n.PerLine)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "harness (writer + sink): %.3f s CPU = %.1f%% of one core\n", r.Harness.CPUSeconds, 100*r.Harness.Cores)
	if r.Gates.Passed {
		fmt.Fprintln(w, "gates: passed")
	} else {
		for _, f := range r.Gates.Failures {
			fmt.Fprintf(w, "gate failed: %s\n", f)
		}
	}
	return nil
}
