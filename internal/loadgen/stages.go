package loadgen

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stage is one step of a rate schedule: over Duration the open model's rate moves linearly
// from where the previous stage ended (0 for the first) to Target requests per second, as
// k6's ramping-arrival-rate stages do.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// ParseStages parses "30s:1000,2m:5000,30s:0": duration:target pairs.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for part := range strings.SplitSeq(s, ",") {
		d, r, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("stage %q: want duration:rate, e.g. 30s:1000", part)
		}
		dur, err := time.ParseDuration(d)
		if err != nil {
			return nil, fmt.Errorf("stage %q: %v", part, err)
		}
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil {
			return nil, fmt.Errorf("stage %q: rate: %v", part, err)
		}
		out = append(out, Stage{dur, rate})
	}
	return out, validateStages(out)
}

func validateStages(st []Stage) error {
	total := 0.0
	for _, s := range st {
		if s.Duration <= 0 || s.Target < 0 || s.Target > 10_000_000 || math.IsNaN(s.Target) {
			return fmt.Errorf("stage %v:%v: want a positive duration and a rate in [0, 1e7]", s.Duration, s.Target)
		}
		total += s.Target
	}
	if len(st) > 0 && total == 0 {
		return errors.New("stages never send: every target rate is 0")
	}
	return nil
}

func stagesDuration(st []Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// schedule gives the intended send time of every send of an open-model run: a constant rate,
// or the piecewise linear rate of stages.
type schedule struct {
	interval float64 // nanoseconds between sends at a constant rate; 0 with stages
	stages   []stageSpan
}

// stageSpan is a stage placed on the run's time line: it starts at offset from, after sends
// sends, at rate r0 and ends at r1.
type stageSpan struct {
	from, dur float64 // seconds
	sends     float64 // sends before the stage
	r0, r1    float64
}

func newSchedule(rate float64, stages []Stage) schedule {
	if len(stages) == 0 {
		return schedule{interval: float64(time.Second) / rate}
	}
	var sc schedule
	var from, sends, r0 float64
	for _, s := range stages {
		d := s.Duration.Seconds()
		sc.stages = append(sc.stages, stageSpan{from: from, dur: d, sends: sends, r0: r0, r1: s.Target})
		from += d
		sends += (r0 + s.Target) / 2 * d
		r0 = s.Target
	}
	return sc
}

// at returns the offset from the start at which send n is due, and false when the schedule
// ends before it.
func (sc schedule) at(n int64) (time.Duration, bool) {
	if sc.interval > 0 {
		return time.Duration(float64(n) * sc.interval), true
	}
	// Send n is due when the integral of the rate reaches n.
	x := float64(n)
	for _, s := range sc.stages {
		in := (s.r0 + s.r1) / 2 * s.dur
		if x >= s.sends+in {
			continue
		}
		// Solve s.r0*t + (s.r1-s.r0)/(2*dur)*t² = x - s.sends for t in [0, dur].
		k := x - s.sends
		a := (s.r1 - s.r0) / (2 * s.dur)
		var t float64
		if math.Abs(a) < 1e-12 {
			t = k / s.r0
		} else {
			t = (-s.r0 + math.Sqrt(max(s.r0*s.r0+4*a*k, 0))) / (2 * a)
		}
		return time.Duration((s.from + min(max(t, 0), s.dur)) * float64(time.Second)), true
	}
	return 0, false
}
