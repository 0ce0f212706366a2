package loadgen

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of a find-max search.
const (
	DefaultFindMaxStart    = 100 // requests per second of the first step
	DefaultFindMaxFactor   = 2   // each step's rate is the last passing one's times this
	DefaultFindMaxStep     = 10 * time.Second
	DefaultFindMaxRefine   = 2 // bisections between the best pass and the first failure
	DefaultFindMaxMaxSteps = 20
)

// SLO bounds what a find-max step may show and still pass.
type SLO struct {
	P99       time.Duration // corrected p99 latency, from the intended send
	ErrorRate float64       // share of requests that failed
}

// DefaultSLO is a p99 of 50 ms and 0.1% errors.
var DefaultSLO = SLO{P99: 50 * time.Millisecond, ErrorRate: 0.001}

// ParseSLO parses "p99=50ms,errors=0.1%"; a bound not named keeps DefaultSLO's.
func ParseSLO(s string) (SLO, error) {
	slo := DefaultSLO
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return slo, fmt.Errorf("slo %q: want p99=DURATION or errors=PERCENT%%", part)
		}
		switch k {
		case "p99":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return slo, fmt.Errorf("slo %q: want a positive duration", part)
			}
			slo.P99 = d
		case "errors":
			f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || f < 0 || f > 100 {
				return slo, fmt.Errorf("slo %q: want a percentage 0..100", part)
			}
			slo.ErrorRate = f / 100
		default:
			return slo, fmt.Errorf("slo %q: unknown bound %q (want p99 or errors)", part, k)
		}
	}
	return slo, nil
}

// FindMaxConfig steps the open model's rate up to find the highest the target sustains.
type FindMaxConfig struct {
	SLO          SLO
	Start        float64       // first rate; 0 means DefaultFindMaxStart
	Factor       float64       // growth per passing step; 0 means DefaultFindMaxFactor
	StepDuration time.Duration // 0 means DefaultFindMaxStep
	Refine       int           // bisections after the first failure; negative means none
	MaxSteps     int           // 0 means DefaultFindMaxMaxSteps
}

// FindMaxStep is one step of a search: the rate asked, what the run achieved, and the verdict.
type FindMaxStep struct {
	Rate         float64 `json:"rate"`
	AchievedRate float64 `json:"achieved_rate"`
	P99MS        float64 `json:"p99_ms"`
	ErrorRate    float64 `json:"error_rate"`
	LateSends    int64   `json:"late_sends"`
	Pass         bool    `json:"pass"`
	Reason       string  `json:"reason,omitempty"` // why a step failed
}

// FindMaxResult is the search in a report: the bounds, every step in order, and the highest
// rate that passed (0 if none did).
type FindMaxResult struct {
	P99MS          float64       `json:"slo_p99_ms"`
	ErrorRate      float64       `json:"slo_error_rate"`
	Steps          []FindMaxStep `json:"steps"`
	MaxSustainable float64       `json:"max_sustainable_rate"`
}

// FindMax runs steps of cfg at increasing open-model rates: each passing step multiplies the
// rate by Factor, the first failure starts a bisection between it and the best pass. It
// returns the report of the best passing step (of the first step if none passed) with the
// search in Report.FindMax.
func FindMax(ctx context.Context, cfg Config, fm FindMaxConfig) (*Report, error) {
	fm = fm.withDefaults()
	res := &FindMaxResult{P99MS: ms(fm.SLO.P99), ErrorRate: fm.SLO.ErrorRate}
	var best, first *Report
	lo, hi := 0.0, 0.0 // best passing rate, lowest failing rate
	rate := fm.Start
	for step := 0; step < fm.MaxSteps && ctx.Err() == nil; step++ {
		c := cfg
		c.Rate, c.Duration, c.Requests, c.Stages = rate, fm.StepDuration, 0, nil
		if c.RunID != 0 {
			c.RunID += uint64(step) // each step's traces are new ones too
		}
		rep, err := Run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("find-max step at %.0f req/s: %w", rate, err)
		}
		if first == nil {
			first = rep
		}
		st := judge(rep, rate, fm.StepDuration, fm.SLO)
		res.Steps = append(res.Steps, st)
		if st.Pass {
			lo, best = rate, rep
		} else {
			hi = rate
		}
		switch {
		case hi == 0:
			rate *= fm.Factor
		case len(res.Steps) >= stepsBeforeRefine(res.Steps)+fm.Refine || lo == 0:
			step = fm.MaxSteps // done
		default:
			rate = (lo + hi) / 2
		}
	}
	res.MaxSustainable = lo
	if best == nil {
		best = first
	}
	best.FindMax = res
	return best, nil
}

// stepsBeforeRefine is the number of steps up to and including the first failure.
func stepsBeforeRefine(steps []FindMaxStep) int {
	for i, s := range steps {
		if !s.Pass {
			return i + 1
		}
	}
	return len(steps)
}

// judge measures a step against the SLO. A step must also have sent nearly the rate asked:
// a generator that fell behind measured a lower rate than it claims. The achieved rate counts
// the requests sent over the step's scheduled time, not over its run, whose end waits for the
// last answers.
func judge(rep *Report, rate float64, step time.Duration, slo SLO) FindMaxStep {
	t := &rep.Totals
	st := FindMaxStep{Rate: rate, AchievedRate: float64(t.Requests-t.Retries) / step.Seconds(), P99MS: t.Latency.P99,
		ErrorRate: 1 - t.SuccessRatio(), LateSends: t.LateSends}
	switch {
	case st.ErrorRate > slo.ErrorRate:
		st.Reason = fmt.Sprintf("error rate %.3f%% over %.3f%%", 100*st.ErrorRate, 100*slo.ErrorRate)
	case st.P99MS > ms(slo.P99):
		st.Reason = fmt.Sprintf("p99 %.1f ms over %.1f ms", st.P99MS, ms(slo.P99))
	case st.AchievedRate < 0.9*rate:
		st.Reason = fmt.Sprintf("sent %.0f req/s of %.0f", st.AchievedRate, rate)
	default:
		st.Pass = true
	}
	return st
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (fm FindMaxConfig) withDefaults() FindMaxConfig {
	if fm.SLO == (SLO{}) {
		fm.SLO = DefaultSLO
	}
	if fm.Start <= 0 {
		fm.Start = DefaultFindMaxStart
	}
	if fm.Factor <= 1 {
		fm.Factor = DefaultFindMaxFactor
	}
	if fm.StepDuration <= 0 {
		fm.StepDuration = DefaultFindMaxStep
	}
	if fm.Refine == 0 {
		fm.Refine = DefaultFindMaxRefine
	}
	fm.Refine = max(fm.Refine, 0)
	if fm.MaxSteps <= 0 {
		fm.MaxSteps = DefaultFindMaxMaxSteps
	}
	return fm
}
