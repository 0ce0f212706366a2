package store

import (
	"testing"
	"time"
)

func TestLoaded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sample := func(at time.Duration, writerBusy time.Duration, busy, total, self time.Duration, ok bool) loadSample {
		return loadSample{at: t0.Add(at), writerBusy: writerBusy, cpu: cpuTimes{busy: busy, total: total, self: self}, cpuOK: ok}
	}
	prev := sample(0, 0, 0, 0, 0, true)
	for _, tc := range []struct {
		name string
		cur  loadSample
		want bool
	}{
		// A window of 250 ms on 2 CPUs: 500 ms of machine time.
		{"writer and machine busy", sample(250*time.Millisecond, 250*time.Millisecond, 450*time.Millisecond, 500*time.Millisecond, 0, true), true},
		{"at both thresholds", sample(250*time.Millisecond, 125*time.Millisecond, 300*time.Millisecond, 500*time.Millisecond, 0, true), true},
		{"writer mostly waiting", sample(250*time.Millisecond, 100*time.Millisecond, 450*time.Millisecond, 500*time.Millisecond, 0, true), false},
		{"machine idle, disk-bound writer", sample(250*time.Millisecond, 250*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond, 0, true), false},
		// The projector's own CPU does not make the machine busy: 450 ms busy, 250 of them its own.
		{"busy only with the projector", sample(250*time.Millisecond, 250*time.Millisecond, 450*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond, true), false},
		{"busy besides the projector", sample(250*time.Millisecond, 250*time.Millisecond, 490*time.Millisecond, 500*time.Millisecond, 150*time.Millisecond, true), true},
		{"no cpu times", sample(250*time.Millisecond, 250*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond, 0, false), false},
		{"no time passed", sample(0, 0, 0, 0, 0, true), false},
	} {
		if got := loaded(prev, tc.cur); got != tc.want {
			t.Errorf("%s: loaded = %v, want %v", tc.name, got, tc.want)
		}
	}
}
