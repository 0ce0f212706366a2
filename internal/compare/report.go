package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/abstats"
)

// Schema tags the JSON report.
const Schema = "otelbench.compare/v1"

// Verdicts, with their exit codes.
const (
	VerdictPass         = "pass"         // 0: no gate failed
	VerdictIdentical    = "identical"    // 0: byte-identical binaries, nothing run
	VerdictRegression   = "regression"   // 1: a gate failed
	VerdictInconclusive = "inconclusive" // 3: too few rounds to ever be significant, or a gate blind to its limit
)

// Exit codes of the verdicts (run errors exit 2).
const (
	ExitPass         = 0
	ExitRegression   = 1
	ExitInconclusive = 3
)

// Report is the outcome of a comparison.
type Report struct {
	Schema    string       `json:"schema"`
	Started   time.Time    `json:"started"`
	SelfCheck bool         `json:"self_check,omitempty"`
	Base      SideInfo     `json:"base"`
	Head      SideInfo     `json:"head"`
	Settings  Settings     `json:"settings"`
	Identical bool         `json:"identical,omitempty"`
	Runs      []RunSample  `json:"runs"`
	Results   []Result     `json:"results"`
	Gates     []GateResult `json:"gates"`
	Warnings  []string     `json:"warnings,omitempty"`
	Verdict   string       `json:"verdict"`
	ExitCode  int          `json:"exit_code"`
}

// Settings records how the comparison ran.
type Settings struct {
	Rounds int      `json:"rounds"`
	Warmup int      `json:"warmup"`
	Order  string   `json:"order"`
	Alpha  float64  `json:"alpha"`
	Power  float64  `json:"power"` // of the detectable changes
	Build  string   `json:"build"`
	Serve  string   `json:"serve"`
	Load   []string `json:"load"`
	Gates  []string `json:"gates"`
}

// RunSample is one run of one side: one sample of every metric.
type RunSample struct {
	Seq     int                `json:"seq"` // position in the schedule
	Side    string             `json:"side"`
	Round   int                `json:"round"`
	Warmup  bool               `json:"warmup,omitempty"`
	Metrics map[string]float64 `json:"metrics"`
}

// Result compares one metric.
type Result struct {
	Metric     string             `json:"metric"`
	Label      string             `json:"label"`
	Better     string             `json:"better"` // "higher" or "lower"
	BaseValues []float64          `json:"base_values"`
	HeadValues []float64          `json:"head_values"`
	Comparison abstats.Comparison `json:"comparison"`
	// Regressed marks a significant change in the worse direction, gated
	// or not; Improved one in the better direction.
	Regressed bool `json:"regressed"`
	Improved  bool `json:"improved"`
	// Detectable is the smallest relative change of the median these rounds
	// would show as significant with Settings.Power at the noise they had
	// (Detectable): a "~" means no change larger than ±Detectable. +Inf when
	// the rounds are too few, NaN when the base median is 0.
	Detectable float64 `json:"detectable"`
}

func newReport(c Config) *Report {
	gates := make([]string, len(c.Gates))
	for i, g := range c.Gates {
		gates[i] = g.String()
	}
	return &Report{
		Schema: Schema, Started: time.Now().UTC(), SelfCheck: c.SelfCheck,
		Settings: Settings{
			Rounds: c.Rounds, Warmup: c.Warmup, Order: "ABBA", Alpha: alpha(c.Alpha), Power: DefaultPower,
			Build: c.Build, Serve: c.Serve, Load: slices.Clone(c.Load), Gates: gates,
		},
		Runs: []RunSample{}, Results: []Result{}, Gates: []GateResult{},
	}
}

func alpha(a float64) float64 {
	if a == 0 {
		return abstats.DefaultAlpha
	}
	return a
}

// finish compares every metric over the measured runs, applies the gates
// and sets the verdict.
func (r *Report) finish(c Config) {
	if r.Identical {
		r.Verdict, r.ExitCode = VerdictIdentical, ExitPass
		return
	}
	a := alpha(c.Alpha)
	for _, m := range Metrics(c.Syscalls) {
		res := Result{Metric: m.Key, Label: m.Label, Better: "lower"}
		if m.Better == HigherIsBetter {
			res.Better = "higher"
		}
		for _, run := range r.Runs {
			if run.Warmup {
				continue
			}
			if run.Side == "base" {
				res.BaseValues = append(res.BaseValues, run.Metrics[m.Key])
			} else {
				res.HeadValues = append(res.HeadValues, run.Metrics[m.Key])
			}
		}
		res.Comparison = abstats.Compare(res.BaseValues, res.HeadValues, a, 0)
		res.Detectable = Detectable(res.BaseValues, res.HeadValues, a, DefaultPower)
		if res.Comparison.Significant && res.Comparison.Ratio != 1 {
			worse := (res.Comparison.Ratio < 1) == (m.Better == HigherIsBetter)
			res.Regressed, res.Improved = worse, !worse
		}
		r.Results = append(r.Results, res)
	}
	for _, g := range c.Gates {
		if res, ok := r.result(g.Metric); ok {
			r.Gates = append(r.Gates, r.evaluate(g, res, c, a))
		}
	}
	r.warn(c, a)
	r.Verdict, r.ExitCode = VerdictPass, ExitPass
	switch {
	case slices.ContainsFunc(r.Gates, func(g GateResult) bool { return g.Fail }):
		r.Verdict, r.ExitCode = VerdictRegression, ExitRegression
	case !abstats.CanDetect(c.Rounds, c.Rounds, a),
		slices.ContainsFunc(r.Gates, func(g GateResult) bool { return g.Blind && !g.AllowedBlind }):
		r.Verdict, r.ExitCode = VerdictInconclusive, ExitInconclusive
	}
}

// evaluate applies g to res and says whether g could have seen a change of
// its limit at all.
func (r *Report) evaluate(g Gate, res Result, c Config, a float64) GateResult {
	gr := g.Evaluate(res.Comparison)
	gr.Detectable = res.Detectable
	if !gr.Fail && blindTo(g.Limit, res.Detectable) {
		gr.Blind = true
		gr.SuggestRounds = RoundsToDetect(res.BaseValues, res.HeadValues, g.Limit, a, DefaultPower)
		gr.AllowedBlind = c.allowsBlind(g.Metric)
	}
	return gr
}

func (r *Report) warn(c Config, a float64) {
	if !abstats.CanDetect(c.Rounds, c.Rounds, a) {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"%d rounds per side can never show a significant difference at α=%g: use --rounds %d or more",
			c.Rounds, a, abstats.MinSamples(a)))
	}
	if res, ok := r.result(MetricErrors); ok {
		for _, side := range []struct {
			name string
			v    []float64
		}{{"base", res.BaseValues}, {"head", res.HeadValues}} {
			n, sum := 0, 0.0
			for _, v := range side.v {
				if v > 0 {
					n++
					sum += v
				}
			}
			if n > 0 {
				r.Warnings = append(r.Warnings, fmt.Sprintf(
					"%s: %.0f requests not answered 2xx in %d of %d rounds", side.name, sum, n, len(side.v)))
			}
		}
	}
	seen := map[string]bool{}
	add := func(w string) {
		// "all samples are equal" (fds, errors) is no news; the too-few-rounds
		// warning is already said once above.
		if seen[w] || strings.Contains(w, "all samples are equal") ||
			(strings.Contains(w, "to detect a difference") && !abstats.CanDetect(c.Rounds, c.Rounds, a)) {
			return
		}
		seen[w] = true
		r.Warnings = append(r.Warnings, w)
	}
	for _, res := range r.Results {
		c := res.Comparison
		for _, ws := range [][]string{c.Base.Warnings, c.Head.Warnings, c.Warnings} {
			for _, w := range ws {
				add(w)
			}
		}
	}
}

func (r *Report) result(key string) (Result, bool) {
	for _, res := range r.Results {
		if res.Metric == key {
			return res, true
		}
	}
	return Result{}, false
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// MarshalJSON writes a non-finite gate change (a rise from zero) or
// detectable change (too few rounds, a zero base) as null.
func (g GateResult) MarshalJSON() ([]byte, error) {
	type plain GateResult
	return json.Marshal(struct {
		plain
		Change     *float64 `json:"change"`
		Detectable *float64 `json:"detectable"`
	}{plain(g), abstats.Finite(g.Change), abstats.Finite(g.Detectable)})
}

// MarshalJSON writes a non-finite detectable change as null.
func (res Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		Detectable *float64 `json:"detectable"`
	}{plain(res), abstats.Finite(res.Detectable)})
}
