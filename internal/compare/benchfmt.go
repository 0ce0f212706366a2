package compare

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// BenchName is the benchmark name of every line WriteBenchfmt writes; the
// side is a name key, so `benchstat -col /side FILE` compares the sides.
const BenchName = "Serve"

// WriteBenchfmt writes the measured rounds in the Go benchmark format, one
// line per side per round in schedule order, after a configuration header:
//
//	BenchmarkServe/side=base 1 12345 req/s 123456 records/s 1200000 p50-ns ...
//
// Latencies are written in ns (benchstat shows them as sec), CPU in seconds
// per 1,000 requests, peak RSS in bytes.
func (r *Report) WriteBenchfmt(w io.Writer) error {
	cfg := []benchfmt.Config{
		{Key: "compare-base", Value: []byte(sanitizeConfig(r.Base.Short())), File: true},
		{Key: "compare-head", Value: []byte(sanitizeConfig(r.Head.Short())), File: true},
		{Key: "compare-schedule", Value: []byte(sanitizeConfig(r.scheduleLine())), File: true},
		{Key: "compare-load", Value: []byte(sanitizeConfig(loadLine(r.Settings.Load))), File: true},
	}
	if r.SelfCheck {
		cfg = append(cfg, benchfmt.Config{Key: "compare-self-check", Value: []byte("true"), File: true})
	}
	bw := benchfmt.NewWriter(w)
	ms := Metrics(r.hasSyscalls())
	for _, run := range r.Runs {
		if run.Warmup {
			continue
		}
		res := &benchfmt.Result{
			Config: cfg,
			Name:   benchfmt.Name(fmt.Sprintf("%s/side=%s", BenchName, run.Side)),
			Iters:  1,
		}
		for _, m := range ms {
			res.Values = append(res.Values, benchfmt.Value{Value: run.Metrics[m.Key] * m.BenchScale, Unit: m.Unit})
		}
		if err := bw.Write(res); err != nil {
			return fmt.Errorf("write benchfmt: %w", err)
		}
	}
	return nil
}

func (r *Report) hasSyscalls() bool {
	for _, res := range r.Results {
		if res.Metric == MetricSyscalls {
			return true
		}
	}
	return false
}

// sanitizeConfig keeps header values on one line.
func sanitizeConfig(s string) string { return strings.ReplaceAll(s, "\n", " ") }
