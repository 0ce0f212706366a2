package compare

import (
	"fmt"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Direction says which way a metric gets better.
type Direction int

// Directions of metrics.
const (
	HigherIsBetter Direction = 1
	LowerIsBetter  Direction = -1
)

// Metric is one per-round measurement compared between the sides. Values
// are kept in base units: seconds, bytes, counts.
type Metric struct {
	// Key names the metric in --fail-on and JSON ("throughput", "p99").
	Key string
	// Label is the table row.
	Label string
	// Suffix follows the SI- or IEC-scaled value in table cells ("s", "B").
	Suffix string
	// Unit is the Go benchmark format unit and BenchScale the factor from
	// the base unit to it (latency is written in ns, as benchstat expects).
	Unit       string
	BenchScale float64
	Better     Direction
}

// Class is the benchunit scaling class of the metric's values.
func (m Metric) Class() benchunit.Class { return benchunit.ClassOf(m.Unit) }

// Metric keys.
const (
	MetricThroughput = "throughput"
	MetricRecords    = "records"
	MetricP50        = "p50"
	MetricP99        = "p99"
	MetricCPU        = "cpu"
	MetricRSS        = "rss"
	MetricFDs        = "fds"
	MetricErrors     = "errors"
	MetricSyscalls   = "syscalls"
)

// metrics lists every metric in table order.
var metrics = []Metric{
	{Key: MetricThroughput, Label: "req/s", Unit: "req/s", BenchScale: 1, Better: HigherIsBetter},
	{Key: MetricRecords, Label: "records/s", Unit: "records/s", BenchScale: 1, Better: HigherIsBetter},
	{Key: MetricP50, Label: "p50 latency", Suffix: "s", Unit: "p50-ns", BenchScale: 1e9, Better: LowerIsBetter},
	{Key: MetricP99, Label: "p99 latency", Suffix: "s", Unit: "p99-ns", BenchScale: 1e9, Better: LowerIsBetter},
	{Key: MetricCPU, Label: "CPU per 1k req", Suffix: "s", Unit: "cpu-sec/1k-req", BenchScale: 1, Better: LowerIsBetter},
	{Key: MetricRSS, Label: "peak RSS", Suffix: "B", Unit: "peak-rss-B", BenchScale: 1, Better: LowerIsBetter},
	{Key: MetricFDs, Label: "open fds", Unit: "open-fds", BenchScale: 1, Better: LowerIsBetter},
	{Key: MetricErrors, Label: "errors", Unit: "errors", BenchScale: 1, Better: LowerIsBetter},
	{Key: MetricSyscalls, Label: "syscalls/req", Unit: "syscalls/req", BenchScale: 1, Better: LowerIsBetter},
}

// Metrics returns the metrics a run measures, in table order.
func Metrics(syscalls bool) []Metric {
	var out []Metric
	for _, m := range metrics {
		if m.Key == MetricSyscalls && !syscalls {
			continue
		}
		out = append(out, m)
	}
	return out
}

// metricByKey returns the metric named key.
func metricByKey(key string) (Metric, error) {
	for _, m := range metrics {
		if m.Key == key {
			return m, nil
		}
	}
	keys := make([]string, len(metrics))
	for i, m := range metrics {
		keys[i] = m.Key
	}
	return Metric{}, fmt.Errorf("unknown metric %q (one of %s)", key, strings.Join(keys, ", "))
}
