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

// TestDeferDecide runs the deferrer's decision over windows of a loaded machine whose lag grows
// at every window end: it defers only after deferBehindWindows windows in a row in which no
// slice reached the raw head (a projector that reaches it keeps up, however the lag moves
// between slices), and after a probe only if the lag still grew.
func TestDeferDecide(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// Window i of 250 ms on 2 CPUs: the writer always committing, 90% of the machine busy
	// besides the projector, the lag one record more than at the window before.
	window := func(i int, lag int64) loadSample {
		w := time.Duration(i) * deferWindow
		return loadSample{at: t0.Add(w), writerBusy: w, lag: lag,
			cpu: cpuTimes{busy: 2 * w * 9 / 10, total: 2 * w}, cpuOK: true}
	}
	for _, tc := range []struct {
		name      string
		reachHead []bool // per window: a slice took every raw row there was
		want      []bool // per window: deferral starts
	}{
		{"never reaches the head", []bool{false, false, false}, []bool{false, true, false}},
		{"keeps up", []bool{true, true, true, true}, []bool{false, false, false, false}},
		{"falls behind every other window", []bool{false, true, false, true, false}, []bool{false, false, false, false, false}},
		{"one good window resets the count", []bool{false, true, false, false}, []bool{false, false, false, true}},
	} {
		d := &deferrer{s: &Store{cfg: Config{ProjectDefer: DefaultProjectDefer}}, last: window(0, 0)}
		for i, reach := range tc.reachHead {
			d.sliceDone(reach)
			if got := d.decide(window(i+1, int64(i+1))); got != tc.want[i] {
				t.Errorf("%s: window %d: defer = %v, want %v", tc.name, i+1, got, tc.want[i])
			}
		}
	}

	// Probes: after deferral a probe window decides alone, on whether the lag still grew.
	for _, tc := range []struct {
		name string
		lag  int64
		want bool
	}{{"lag grew", 5, true}, {"lag fell", 1, false}} {
		d := &deferrer{s: &Store{cfg: Config{ProjectDefer: DefaultProjectDefer}}, last: window(0, 3), probing: true}
		d.sliceDone(true)
		if got := d.decide(window(1, tc.lag)); got != tc.want {
			t.Errorf("probe, %s: defer = %v, want %v", tc.name, got, tc.want)
		}
	}

	// Past the lag bound nothing starts.
	d := &deferrer{s: &Store{cfg: Config{ProjectDefer: DefaultProjectDefer, ProjectDeferRecords: 2}}, last: window(0, 0)}
	for i := range 4 {
		d.sliceDone(false)
		if d.decide(window(i+1, int64(i+2))) {
			t.Errorf("lag bound: window %d started deferral at %d records of lag, bound 2", i+1, i+2)
		}
	}
}
