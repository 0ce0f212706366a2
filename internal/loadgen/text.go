package loadgen

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report as a human-readable table: one row per
// signal of the mix and a total row, then the latency percentiles.
func (r *Report) WriteText(w io.Writer) error {
	r.writeTextHeader(w)
	names := r.activeSignals()
	if err := r.writeSignalTable(w, names); err != nil {
		return err
	}
	writeGRPCStatus(w, r.Totals.GRPCStatus)
	fmt.Fprintln(w)
	if err := r.writeLatencyTable(w, names); err != nil {
		return err
	}
	r.writeTextSummary(w)
	if fm := r.FindMax; fm != nil {
		if err := fm.writeText(w); err != nil {
			return err
		}
	}
	return nil
}

// writeTextHeader writes the line that says what load ran, and a blank line.
func (r *Report) writeTextHeader(w io.Writer) {
	c := r.Config
	enc := c.Encoding
	if c.Protocol == string(ProtocolGRPC) {
		enc = "grpc " + enc
	}
	fmt.Fprintf(w, "otelbench load: %s model, %s, %d records/request, %s", c.Model, c.Endpoint, c.Records, enc)
	if c.Compression != "none" {
		fmt.Fprintf(w, "+%s", c.Compression)
	}
	if c.Times != "" {
		fmt.Fprintf(w, ", %s times", c.Times)
	}
	if c.IDs != "" {
		fmt.Fprintf(w, ", %s ids", c.IDs)
		if c.RunID != "" { // a merged report has one run id per shard
			fmt.Fprintf(w, " (run %s)", c.RunID)
		}
	}
	if c.Model == "open" {
		fmt.Fprintf(w, ", %.0f req/s target, up to %d in flight", c.Rate, c.Concurrency)
	} else {
		fmt.Fprintf(w, ", concurrency %d", c.Concurrency)
	}
	fmt.Fprintf(w, ", %.2fs", r.DurationSeconds)
	if r.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// writeSignalTable writes requests, answers and records of each signal in
// names and of the total.
func (r *Report) writeSignalTable(w io.Writer, names []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "signal\trequests\treq/s\t2xx\t400\t413\t415\t429\t503\tother\txport err\trecords acked\trejected\trecords/s\tlate\t")
	row := func(name string, s *SignalStats) {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%d\t\n", name, s.Requests, s.RequestsPerSecond,
			s.Status.S2xx, s.Status.S400, s.Status.S413, s.Status.S415, s.Status.S429, s.Status.S503, s.Status.Other,
			s.TransportErrors, s.RecordsAcked, s.RecordsRejected, s.RecordsPerSecond, s.LateSends)
	}
	for _, n := range names {
		row(n, r.Signals[n])
	}
	row("total", &r.Totals)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// writeLatencyTable writes the latency percentiles of each signal in names
// and of the total.
func (r *Report) writeLatencyTable(w io.Writer, names []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	label := "latency ms"
	if r.Config.Model == "open" {
		label = "latency ms (from intended send)"
	}
	fmt.Fprintf(tw, "%s\tp50\tp90\tp99\tp99.9\tmax\tmean\t\n", label)
	lat := func(name string, p Percentiles) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, p.P50, p.P90, p.P99, p.P999, p.Max, p.Mean)
	}
	for _, n := range names {
		lat(n, r.Signals[n].Latency)
	}
	lat("total", r.Totals.Latency)
	if u := r.Totals.LatencyUncorrected; u != nil {
		lat("total, uncorrected", *u)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// writeTextSummary writes what was sent and acknowledged over the whole
// run, and the failures by cause.
func (r *Report) writeTextSummary(w io.Writer) {
	t := &r.Totals
	if t.Canceled > 0 || t.Retries > 0 || t.ResponseDecodeErrors > 0 {
		fmt.Fprintf(w, "\ncanceled in flight: %d, retries: %d, undecodable 200 bodies: %d\n", t.Canceled, t.Retries, t.ResponseDecodeErrors)
	}
	fmt.Fprintf(w, "\nsent %d records in %d requests (%d bytes); acknowledged %d, rejected %d; error rate %.2f%%; %.2f%% of requests succeeded\n",
		t.RecordsSent, t.Requests, t.BytesSent, t.RecordsAcked, t.RecordsRejected, 100*t.ErrorRate(), 100*t.SuccessRatio())
	if len(r.Failures) > 0 {
		var b strings.Builder
		writeFailures(&b, r.Failures)
		fmt.Fprintf(w, "\nfailures by cause:%s\n", b.String())
	}
}

// writeText writes the steps of a find-max search and its result.
func (fm *FindMaxResult) writeText(w io.Writer) error {
	fmt.Fprintf(w, "\nfind-max (SLO p99 <= %.1f ms, errors <= %.3f%%):\n", fm.P99MS, 100*fm.ErrorRate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate\tachieved\tp99 ms\terrors\tlate\tverdict\t")
	for _, s := range fm.Steps {
		verdict := "pass"
		if !s.Pass {
			verdict = "fail: " + s.Reason
		}
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.2f\t%.3f%%\t%d\t%s\t\n", s.Rate, s.AchievedRate, s.P99MS, 100*s.ErrorRate, s.LateSends, verdict)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	_, err := fmt.Fprintf(w, "highest sustainable rate: %.0f req/s\n", fm.MaxSustainable)
	return err
}

// activeSignals returns the signals of the mix (weight > 0), in order.
func (r *Report) activeSignals() []string {
	var out []string
	for _, n := range signalNames() {
		if r.Config.Mix[n] > 0 || (r.Signals[n] != nil && r.Signals[n].Requests > 0) {
			out = append(out, n)
		}
	}
	return out
}
