package loadgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// DefaultMinSuccess is the share of requests that must succeed for Report.Check to pass.
const DefaultMinSuccess = 0.99

// ErrRunFailed is wrapped by Report.Check's errors.
var ErrRunFailed = errors.New("load failed")

// Check returns an error wrapping ErrRunFailed when the run should fail a CI job: an attempt
// got an answer that retrying cannot fix (a 4xx other than 429) or failed without an answer
// (a transport error), or fewer than minSuccess of the requests succeeded (503 and 429 count
// against it, unless retries got them through). The message lists each cause of failure with
// its first error and the likely fix.
func (r *Report) Check(minSuccess float64) error {
	t := &r.Totals
	var why []string
	var fatal int64
	for _, f := range r.Failures {
		if f.Fatal {
			fatal += f.Count
		}
	}
	if fatal > 0 {
		why = append(why, fmt.Sprintf("%d attempts failed in ways retrying cannot fix", fatal))
	}
	if ratio := t.SuccessRatio(); ratio < minSuccess {
		why = append(why, fmt.Sprintf("%.2f%% of %d requests succeeded, fewer than --min-success %s%%",
			100*ratio, t.Succeeded+t.Failed, strconv.FormatFloat(100*minSuccess, 'f', -1, 64)))
	}
	if len(why) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(strings.Join(why, "; "))
	writeFailures(&b, r.Failures)
	return fmt.Errorf("%w: %s", ErrRunFailed, b.String())
}

// writeFailures writes one paragraph per cause: count, signals, first error, fix.
func writeFailures(b *strings.Builder, fs []Failure) {
	for _, f := range fs {
		fmt.Fprintf(b, "\n  %s: %d (%s); first: %s", f.Cause, f.Count, strings.Join(f.Signals, ", "), f.FirstError)
		if f.Hint != "" {
			fmt.Fprintf(b, "\n    fix: %s", f.Hint)
		}
	}
}

// mergeFailures adds the causes of b to a.
func mergeFailures(a, b []Failure) []Failure {
next:
	for _, f := range b {
		for i := range a {
			if a[i].Cause == f.Cause {
				a[i].Count += f.Count
				for _, s := range f.Signals {
					if !strings.Contains(strings.Join(a[i].Signals, ","), s) {
						a[i].Signals = append(a[i].Signals, s)
					}
				}
				continue next
			}
		}
		f.Signals = append([]string(nil), f.Signals...)
		a = append(a, f)
	}
	return a
}

// report assembles the Report from the accumulators.
func (r *runner) report(elapsed time.Duration, interrupted bool) (*Report, error) {
	cfg := r.cfg
	pc := r.pool.Config()
	rep := &Report{
		Schema: Schema, Started: r.start.UTC(), DurationSeconds: elapsed.Seconds(),
		Interrupted: interrupted, Signals: map[string]*SignalStats{},
		Config: ReportConfig{
			Endpoint: cfg.Endpoint, Mix: map[string]int{}, Records: pc.Records, Model: cfg.model(),
			Concurrency: cfg.Concurrency, Rate: cfg.Rate, Encoding: string(pc.Encoding),
			Compression: string(r.compression()), Connections: cfg.Connections, Times: string(r.times()), Attrs: pc.Attrs, AttrCardinality: pc.AttrCardinality,
			BodyBytes: pc.BodyBytes, SpansPerTrace: pc.SpansPerTrace, Services: pc.Services, Seed: pc.Seed,
			DurationSeconds: cfg.Duration.Seconds(), Requests: cfg.Requests,
			TimeoutSeconds: cfg.Timeout.Seconds(), Retry: cfg.Retry, Headers: cfg.headerNames(),
			Protocol: string(cfg.Protocol), RunID: fmt.Sprintf("%016x", cfg.RunID), IDs: "replay", Values: "replay",
			Temporality: string(pc.Temporality), Instances: pc.Instances, TraceServices: pc.TraceServices,
			ErrorRate: pc.ErrorRate, LogTraceShare: pc.LogTraceShare, TracesSent: r.traces.Load(),
			CounterIncrease: r.counterIncrease.Load(),
		},
		Failures: r.failures.list(),
	}
	if r.ids {
		rep.Config.IDs = "unique"
	}
	if r.values {
		rep.Config.Values = "advance"
	}
	for _, s := range cfg.Stages {
		rep.Config.Stages = append(rep.Config.Stages, StageJSON{s.Duration.Seconds(), s.Target})
	}
	total, totalU := newHistogram(), newHistogram()
	for _, sig := range signal.All() {
		rep.Config.Mix[sig.String()] = cfg.Mix[sig.Index()]
		a := r.acc[sig.Index()]
		a.mu.Lock()
		s := a.stats
		if err := s.finish(elapsed.Seconds(), a.h, a.hu); err != nil {
			a.mu.Unlock()
			return nil, err
		}
		total.Merge(a.h)
		if a.hu != nil {
			totalU.Merge(a.hu)
		}
		a.mu.Unlock()
		rep.Signals[sig.String()] = &s
		rep.Totals.mergeCounts(&s)
	}
	if !cfg.open() {
		totalU = nil
	}
	if err := rep.Totals.finish(elapsed.Seconds(), total, totalU); err != nil {
		return nil, err
	}
	return rep, nil
}
