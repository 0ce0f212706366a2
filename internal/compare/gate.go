package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/otelbench/otelbench/internal/abstats"
)

// Gate fails a comparison when a metric changed significantly and by more
// than Limit in the metric's worse direction.
type Gate struct {
	Metric string
	// Limit is the allowed relative change of the median, signed in the
	// metric's worse direction: -0.05 for throughput, +0.10 for p99.
	Limit float64
}

// DefaultGates apply when no --fail-on is given: a throughput drop beyond
// 5% or a p99 rise beyond 10%.
var DefaultGates = []Gate{{Metric: MetricThroughput, Limit: -0.05}, {Metric: MetricP99, Limit: 0.10}}

// String formats g the way ParseGate reads it: "throughput:-5%".
func (g Gate) String() string {
	return fmt.Sprintf("%s:%+g%%", g.Metric, roundPct(g.Limit*100))
}

func roundPct(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// ParseGate parses "METRIC:LIMIT%", e.g. "throughput:-5%" or "p99:+10%". An
// unsigned limit takes the metric's worse direction ("cpu:5%" is "cpu:+5%");
// a limit in the better direction is an error, since it could only fire on
// an improvement.
func ParseGate(s string) (Gate, error) {
	key, limit, ok := strings.Cut(s, ":")
	if !ok {
		return Gate{}, fmt.Errorf("gate %q: want METRIC:LIMIT%%, e.g. throughput:-5%%", s)
	}
	m, err := metricByKey(strings.TrimSpace(key))
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: %w", s, err)
	}
	limit = strings.TrimSpace(limit)
	num, pct := strings.CutSuffix(limit, "%")
	if !pct {
		return Gate{}, fmt.Errorf("gate %q: limit must be a percentage like 5%%", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Gate{}, fmt.Errorf("gate %q: bad limit %q", s, limit)
	}
	signed := strings.HasPrefix(num, "+") || strings.HasPrefix(num, "-")
	worse := -float64(m.Better)
	switch {
	case !signed:
		v = math.Abs(v) * worse
	case v != 0 && math.Signbit(v) != math.Signbit(worse):
		dir := "drops"
		if m.Better == LowerIsBetter {
			dir = "rises"
		}
		return Gate{}, fmt.Errorf("gate %q: %s regresses when it %s; use %+g%%", s, m.Key, dir, -v)
	}
	return Gate{Metric: m.Key, Limit: v / 100}, nil
}

// GateResult is the outcome of one gate.
type GateResult struct {
	Gate   string `json:"gate"`
	Metric string `json:"metric"`
	// Change is the relative change of the head median against the base.
	Change      float64 `json:"change"`
	Significant bool    `json:"significant"`
	P           float64 `json:"p"`
	Fail        bool    `json:"fail"`
	// Detectable is the metric's smallest relative change the rounds would
	// have shown as significant with DefaultPower (Result.Detectable).
	Detectable float64 `json:"detectable"`
	// Blind marks a gate that did not fail although a change of its limit
	// was below Detectable: its pass says nothing. SuggestRounds is the
	// number of rounds per side that would see it at the same noise (0: more
	// than MaxSuggestedRounds). AllowedBlind marks a blind gate that
	// --allow-blind let pass.
	Blind         bool `json:"blind,omitempty"`
	SuggestRounds int  `json:"suggest_rounds,omitempty"`
	AllowedBlind  bool `json:"allowed_blind,omitempty"`
}

// blindTo reports whether a gate of limit cannot see a change of its own
// size when the rounds detect only changes of detectable or larger. An
// unknown detectable change (a zero base median) does not count as blind.
func blindTo(limit, detectable float64) bool {
	return !math.IsNaN(detectable) && math.Abs(limit) < detectable
}

// Evaluate applies g to the comparison of its metric: it fails only when the
// change is significant and lies beyond the limit in the worse direction.
func (g Gate) Evaluate(c abstats.Comparison) GateResult {
	change := c.Change()
	beyond := false
	switch {
	case math.IsNaN(change):
	case g.Limit < 0 || (g.Limit == 0 && math.Signbit(g.Limit)):
		beyond = change < g.Limit
	default:
		beyond = change > g.Limit
	}
	return GateResult{
		Gate: g.String(), Metric: g.Metric, Change: change,
		Significant: c.Significant, P: c.P, Fail: c.Significant && beyond, Detectable: math.NaN(),
	}
}
