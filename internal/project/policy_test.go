package project

import (
	"context"
	"errors"
	"testing"
	"time"
)

// script is a fake clock and CPU source for a policy: every read returns the next reading.
type script struct {
	now  time.Time
	cpu  CPUTimes
	fail bool
	lag  int64

	share   float64 // the machine's busy share while the policy waits (After)
	lagRate int64   // records the lag grows by while it waits a window
	duty    float64 // the writer's busy share of the time
	full    bool    // the data directory is over its size bound
	writer  time.Duration
}

func (s *script) Now() time.Time { return s.now }
func (s *script) After(d time.Duration) <-chan time.Time {
	s.advance(d, s.share, 0, s.lagRate)
	ch := make(chan time.Time, 1)
	ch <- s.now
	return ch
}
func (s *script) Read() (CPUTimes, error) {
	if s.fail {
		return CPUTimes{}, errors.New("no cpu times")
	}
	return s.cpu, nil
}

// advance moves the script by d on a 2-CPU machine whose others use share of it and whose
// projector used self, with the lag grown by lag records.
func (s *script) advance(d time.Duration, share float64, self time.Duration, lag int64) {
	s.now = s.now.Add(d)
	s.cpu.Total += 2 * d
	s.cpu.Busy += time.Duration(float64(2*d)*share) + self
	s.cpu.Self += self
	s.lag += lag
	s.writer += time.Duration(float64(d) * s.duty)
}

func newScripted(cfg Config) (*Policy, *script) {
	s := &script{now: time.Unix(1000, 0), duty: 1}
	cfg.CPU, cfg.Clock = s, s
	return NewPolicy(cfg, func() Reading {
		return Reading{LagRecords: s.lag, LagSeconds: 1, WriterBusy: s.writer, DiskPressure: s.full}
	}), s
}

// TestLoaded: the machine is loaded when the writer is busy WriterDuty of the window and
// everything but the projector uses BusyShare of the CPU.
func TestLoaded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	at := func(writer, busy, total, self time.Duration, ok bool) Sample {
		return Sample{At: t0.Add(Window), Reading: Reading{WriterBusy: writer},
			CPU: CPUTimes{Busy: busy, Total: total, Self: self}, CPUOK: ok}
	}
	prev := Sample{At: t0, CPUOK: true}
	for _, tc := range []struct {
		name string
		cur  Sample
		want bool
	}{
		// A window of 250 ms on 2 CPUs: 500 ms of machine time.
		{"writer and machine busy", at(250*ms, 450*ms, 500*ms, 0, true), true},
		{"at both thresholds", at(125*ms, 300*ms, 500*ms, 0, true), true},
		{"machine below its threshold", at(250*ms, 290*ms, 500*ms, 0, true), false},
		{"writer mostly waiting", at(100*ms, 450*ms, 500*ms, 0, true), false},
		// The projector's own CPU does not make the machine busy: 450 ms busy, 250 of them its own.
		{"busy only with the projector", at(250*ms, 450*ms, 500*ms, 250*ms, true), false},
		{"busy besides the projector", at(250*ms, 490*ms, 500*ms, 150*ms, true), true},
		{"no cpu times", at(250*ms, 500*ms, 500*ms, 0, false), false},
		{"no time passed", Sample{At: t0, CPUOK: true}, false},
	} {
		if got := loaded(prev, tc.cur); got != tc.want {
			t.Errorf("%s: loaded = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPolicyStates drives the state machine through slices and windows: each step is a slice
// (n of total rows, ingest idle or not) over 100 ms of a machine whose others use share of the
// CPU while the lag grows by lag records, then Check; want is the state after Check and
// whether it deferred.
func TestPolicyStates(t *testing.T) {
	type step struct {
		n, total   int
		ingestIdle bool
		share      float64
		lag        int64
		want       State
		defers     bool
	}
	behind := step{16, 17, false, 0.9, 40, KeepingUp, false} // a slice that left rows, ingest on
	deferring := behind
	deferring.want, deferring.defers = Deferring, true
	for _, tc := range []struct {
		name  string
		cfg   Config
		noCPU bool
		steps []step
	}{
		{"reached the head", Config{}, false, []step{{3, 3, false, 0.9, 0, Idle, false}}},
		{"backlog, ingest idle", Config{}, false, []step{{16, 17, true, 0.1, -16, CatchingUp, false}}},
		// Windows close at the first Check 250 ms after they opened: the 4th and the 7th step.
		{"falls behind two windows", Config{}, false, []step{behind, behind, behind, behind, behind, behind, deferring}},
		{"reaches the head once a window", Config{}, false, []step{behind, behind, {16, 16, false, 0.9, 0, Idle, false},
			behind, behind, behind, behind, behind, behind, deferring}},
		{"catch-up between resets the count", Config{}, false, []step{behind, behind, behind, behind,
			{16, 17, true, 0.9, 40, CatchingUp, false}, behind, behind, behind, behind, behind, behind, deferring}},
		{"machine not busy", Config{}, false, []step{behind, behind, behind, behind,
			{16, 17, false, 0.5, 40, KeepingUp, false}, {16, 17, false, 0.5, 40, KeepingUp, false}, {16, 17, false, 0.5, 40, KeepingUp, false}}},
		{"lag does not grow", Config{}, false, []step{behind, behind, behind, behind, behind, behind,
			{16, 17, false, 0.9, -200, KeepingUp, false}}},
		{"disabled", Config{MaxLag: -1}, false, []step{behind, behind, behind, behind, behind, behind, behind}},
		{"past the records bound", Config{MaxLagRecords: 100}, false, []step{behind, behind, behind, behind, behind, behind, behind}},
		{"no cpu times", Config{}, true, []step{behind, behind, behind, behind, behind, behind, behind}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := newScripted(tc.cfg)
			s.fail = tc.noCPU
			if p.State() != Idle {
				t.Fatalf("new policy %v, want %v", p.State(), Idle)
			}
			for i, st := range tc.steps {
				s.advance(100*time.Millisecond, st.share, 0, st.lag)
				p.Sliced(st.n, st.total, st.ingestIdle)
				if got := p.Check(); got != st.defers || p.State() != st.want {
					t.Fatalf("step %d: %v, defers %v; want %v, %v", i+1, p.State(), got, st.want, st.defers)
				}
			}
		})
	}
	// A writer busy 30% of the time is no steady stream: never deferring.
	p, s := newScripted(Config{})
	s.duty = 0.3
	for i := range 10 {
		s.advance(100*time.Millisecond, 0.9, 0, 40)
		p.Sliced(16, 17, false)
		if p.Check() || p.State() != KeepingUp {
			t.Fatalf("writer mostly waiting, step %d: %v; want %v", i+1, p.State(), KeepingUp)
		}
	}
	// Over the disk bound, space comes back only from what runs between slices: never deferring.
	p, s = newScripted(Config{})
	s.full = true
	for i := range 10 {
		s.advance(100*time.Millisecond, 0.9, 0, 40)
		p.Sliced(16, 17, false)
		if p.Check() || p.State() != KeepingUp {
			t.Fatalf("over the disk bound, step %d: %v; want %v", i+1, p.State(), KeepingUp)
		}
	}
}

// TestPolicyWait: a Deferring projector waits while the machine stays busy and the lag within
// its bound, probes every ProbeEvery (a probe whose lag still grew defers again, one that kept
// up or reached the head ends deferring), and stops when the load falls or the lag passes its
// bound.
func TestPolicyWait(t *testing.T) {
	ctx := context.Background()
	toDeferring := func(t *testing.T, cfg Config) (*Policy, *script) {
		p, s := newScripted(cfg)
		for range 7 {
			s.advance(100*time.Millisecond, 0.9, 0, 40)
			p.Sliced(16, 17, false)
			p.Check()
		}
		if p.State() != Deferring {
			t.Fatalf("set-up: %v, want %v", p.State(), Deferring)
		}
		return p, s
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		share   float64 // while waiting
		lagRate int64   // a window, while waiting
		waited  time.Duration
		want    State
		probing bool
		// idleWriter is the writer's idle share while waiting.
		idleWriter float64
	}{
		{"busy until the probe", Config{}, 0.9, 0, ProbeEvery, Deferring, true, 0},
		{"load falls", Config{}, 0.5, 0, Window, KeepingUp, false, 0},
		{"ingest stops", Config{}, 0.9, 0, Window, KeepingUp, false, 1},
		// The set-up left 280 records of lag: the bound is passed after two windows more.
		{"lag reaches its bound", Config{MaxLagRecords: 300}, 0.9, 10, 2 * Window, KeepingUp, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := toDeferring(t, tc.cfg)
			s.share, s.lagRate = tc.share, tc.lagRate
			s.duty = 1 - tc.idleWriter
			var waited time.Duration
			if !p.Wait(ctx, func(d time.Duration) { waited += d }) {
				t.Fatal("Wait ended without ctx ending")
			}
			if p.State() != tc.want || p.probing != tc.probing || waited != tc.waited {
				t.Errorf("%v, probing %v after %v; want %v, %v after %v", p.State(), p.probing, waited, tc.want, tc.probing, tc.waited)
			}
		})
	}
	// The probe: a window of slices, then Check decides alone on the lag.
	for _, tc := range []struct {
		name string
		lag  int64 // per slice of the probe
		n    int   // of 17 rows
		want State
	}{
		{"lag still grows", 40, 16, Deferring},
		{"lag falls", -40, 16, KeepingUp},
		{"reaches the head", -40, 17, Idle},
	} {
		t.Run("probe, "+tc.name, func(t *testing.T) {
			p, s := toDeferring(t, Config{})
			s.share = 0.9
			p.Wait(ctx, func(time.Duration) {})
			for range 3 {
				s.advance(100*time.Millisecond, 0.9, 0, tc.lag)
				p.Sliced(tc.n, 17, false)
				p.Check()
			}
			if p.State() != tc.want {
				t.Errorf("after the probe window: %v, want %v", p.State(), tc.want)
			}
		})
	}
	t.Run("ctx ends", func(t *testing.T) {
		p, _ := toDeferring(t, Config{})
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		// The script's After is ready at once too: either may win, so loop until Wait sees ctx.
		for range 100 {
			if !p.Wait(ctx, func(time.Duration) {}) {
				return
			}
		}
		t.Error("Wait never returned false with ctx ended")
	})
}
