package pipeline

import (
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/otelbench/otelbench/internal/abstats"
)

// Metric is a figure of a report compared between two sets of runs; every
// metric is lower-is-better.
type Metric struct {
	Name string
	Unit string
	Get  func(*Report) (float64, bool) // false: the report lacks it
}

// Metrics are the figures CompareReports compares, in table order.
var Metrics = []Metric{
	{"cpu/1k-lines", "s", func(r *Report) (float64, bool) {
		return r.Agent.CPUPer1000Lines, r.Agent.Error == "" || r.Agent.CPUPer1000Lines > 0
	}},
	{"syscalls/line", "", func(r *Report) (float64, bool) {
		if r.Agent.Syscalls == nil {
			return 0, false
		}
		return r.Agent.Syscalls.PerLine, true
	}},
	{"peak-rss", "MiB", func(r *Report) (float64, bool) {
		return float64(r.Agent.PeakRSSBytes) / (1 << 20), r.Agent.PeakRSSBytes > 0
	}},
	{"latency-p50", "ms", func(r *Report) (float64, bool) { return r.Totals.Latency.P50, r.Totals.Distinct > 0 }},
	{"latency-p99", "ms", func(r *Report) (float64, bool) { return r.Totals.Latency.P99, r.Totals.Distinct > 0 }},
	{"missing", "lines", func(r *Report) (float64, bool) { return float64(r.Totals.Missing), true }},
	{"duplicates", "lines", func(r *Report) (float64, bool) { return float64(r.Totals.Duplicates), true }},
}

// MetricComparison is one row of a comparison.
type MetricComparison struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit,omitempty"`
	abstats.Comparison
	// Regression is set when the head is significantly worse than the base
	// by more than the threshold.
	Regression bool `json:"regression"`
}

// Comparison is the result of CompareReports.
type Comparison struct {
	Base, Head    int                `json:"-"`
	MaxRegression float64            `json:"max_regression_pct"`
	Rows          []MetricComparison `json:"metrics"`
}

// CompareReports compares base and head runs metric by metric with the
// Mann-Whitney U test and benchstat's rules (internal/abstats): a row is
// a regression when the change is significant at alpha and the head's
// median is worse by more than maxRegressionPct percent.
func CompareReports(base, head []*Report, alpha, maxRegressionPct float64) *Comparison {
	c := &Comparison{Base: len(base), Head: len(head), MaxRegression: maxRegressionPct}
	for _, m := range Metrics {
		b, okb := values(base, m)
		h, okh := values(head, m)
		if !okb || !okh {
			continue
		}
		row := MetricComparison{Metric: m.Name, Unit: m.Unit, Comparison: abstats.Compare(b, h, alpha, 0)}
		ch := row.Change()
		row.Regression = row.Significant && (math.IsInf(ch, 1) || ch*100 > maxRegressionPct)
		c.Rows = append(c.Rows, row)
	}
	return c
}

func values(rs []*Report, m Metric) ([]float64, bool) {
	var out []float64
	for _, r := range rs {
		v, ok := m.Get(r)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// Regressions returns the rows that regressed.
func (c *Comparison) Regressions() []MetricComparison {
	var out []MetricComparison
	for _, r := range c.Rows {
		if r.Regression {
			out = append(out, r)
		}
	}
	return out
}

// WriteText prints the comparison the way benchstat does: median ± range
// per side, the delta (or ~ when not significant) and the test.
func (c *Comparison) WriteText(w io.Writer, baseName, headName string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\t%s\t\t%s\t\tdelta\t\n", baseName, headName)
	for _, r := range c.Rows {
		mark := ""
		if r.Regression {
			mark = "  REGRESSION"
		}
		fmt.Fprintf(tw, "%s\t%s\t± %s\t%s\t± %s\t%s (%s)%s\t\n", r.Metric, num(r.Base.Center, r.Unit), r.Base.RangePct(),
			num(r.Head.Center, r.Unit), r.Head.RangePct(), r.Delta, r.Test, mark)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	if n := min(c.Base, c.Head); !abstats.CanDetect(c.Base, c.Head, 0) {
		fmt.Fprintf(w, "note: %d runs per side cannot show a significant difference; run at least %d\n", n, abstats.MinSamples(0))
	}
	return nil
}

func num(v float64, unit string) string {
	if unit == "" || unit == "lines" {
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}

// ReadReports reads report files.
func ReadReports(paths []string) ([]*Report, error) {
	var out []*Report
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read report: %w", err)
		}
		r, err := ReadReport(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}
