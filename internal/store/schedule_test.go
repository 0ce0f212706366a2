package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/signal"
)

// stepClock is a fake clock for the projection policy, and the fake writer busy time it reads
// (readingHook). Its time moves only when the test steps it or the policy waits (After returns
// at once, the time waited having passed). While load reports true, the writer is busy 90% of
// the time and each wait calls ingest; otherwise it is idle. windows counts the waits of a
// Deferring projector (project.Window).
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	writer  time.Duration
	load    func() bool
	ingest  func()
	windows atomic.Int64
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) writerBusy() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writer
}

func (c *stepClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	if c.load != nil && c.load() {
		c.writer += d * 9 / 10
	}
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	if d == project.Window {
		c.windows.Add(1)
	}
	if c.ingest != nil && c.load != nil && c.load() {
		c.ingest()
	}
	c.step(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// fakeCPU is a 2-CPU machine on clock whose CPU time besides the projector's is busy (a share
// of its time, changed at will) since the last read; with fail set it cannot be read.
type fakeCPU struct {
	clock *stepClock
	mu    sync.Mutex
	busy  float64
	fail  bool
	last  time.Time
	times project.CPUTimes
}

func (f *fakeCPU) set(busy float64) {
	f.mu.Lock()
	f.busy = busy
	f.mu.Unlock()
}

func (f *fakeCPU) Read() (project.CPUTimes, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return project.CPUTimes{}, errors.New("no cpu times here")
	}
	now := f.clock.Now()
	if !f.last.IsZero() {
		d := 2 * now.Sub(f.last)
		f.times.Total += d
		f.times.Busy += time.Duration(float64(d) * f.busy)
	}
	f.last = now
	return f.times, nil
}

// TestProjectionDefers runs the projection policy on a real store (a real SQLite file) with a
// fake clock and CPU source, so it decides the same on any host: after each slice the test
// appends more raw rows than a slice takes (ingest commits while the projector works, and the
// lag grows) and moves the clock 100 ms, the writer busy 90% of it; while the projector waits,
// ingest goes on (stepClock). On a busy machine
// the projector, keeping up, falls behind for two windows and defers; it probes and defers again
// while the load lasts; once the appends stop it catches up and goes idle, every log projected.
// Deferral is off when disabled, when the lag is past its bound, when the machine is not busy,
// and when its CPU times cannot be read.
func TestProjectionDefers(t *testing.T) {
	const (
		loadSlices = 40 // slices after which the appends stop
		perSlice   = 20 // raw rows appended after each slice; a slice takes 16
	)
	for _, tc := range []struct {
		name      string
		cfg       Config
		busy      float64
		noCPU     bool
		idleAfter bool // the machine goes idle when the appends stop
		wantDefer bool
	}{
		{name: "busy machine", busy: 0.9, wantDefer: true},
		{name: "busy machine, load falls", busy: 0.9, idleAfter: true, wantDefer: true},
		{name: "disabled", cfg: Config{ProjectLag: -1}, busy: 0.9},
		{name: "past the records bound", cfg: Config{ProjectLagRecords: 1}, busy: 0.9},
		{name: "machine not busy", busy: 0.5},
		{name: "no cpu times", busy: 0.9, noCPU: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &stepClock{now: time.Unix(1_000_000, 0)}
			cpu := &fakeCPU{clock: clock, busy: tc.busy, fail: tc.noCPU}
			cfg := tc.cfg
			cfg.Sync, cfg.Logger, cfg.ProjectSlice, cfg.CPU, cfg.Clock = SyncOff, quietLogger, 16, cpu, clock

			b, err := logsMarshaler.MarshalLogs(makeLogs("svc", "defer", 10))
			if err != nil {
				t.Fatal(err)
			}
			var (
				s        *Store
				states   []project.State // after each slice, consecutive repeats dropped
				slicesN  int
				appended int // raw rows, perSlice before Open
				hookErr  error
			)
			var live atomic.Pointer[Store] // the store the projector runs in, set by its first slice
			appendRows := func(s *Store, n int) error {
				for range n {
					if err := s.Append(context.Background(), signal.Logs, b, 10); err != nil {
						return err
					}
					appended++
				}
				return nil
			}
			sliceHook = func(s *Store, _ *shard, st project.State) {
				live.Store(s)
				if len(states) == 0 || states[len(states)-1] != st {
					states = append(states, st)
				}
				if slicesN++; slicesN > loadSlices || hookErr != nil {
					return
				}
				if slicesN == loadSlices && tc.idleAfter {
					cpu.set(0.1)
				}
				if slicesN < loadSlices {
					hookErr = appendRows(s, perSlice)
				}
				clock.step(100 * time.Millisecond)
			}
			// The load lasts loadSlices slices; while the projector defers, ingest goes on.
			clock.load = func() bool { return slicesN < loadSlices && hookErr == nil }
			clock.ingest = func() { hookErr = appendRows(live.Load(), 1) }
			readingHook = func(r *project.Reading) { r.WriterBusy = clock.writerBusy() }
			defer func() { readingHook = nil }()
			// The first rows wait in the raw log before the projector starts, so that its first slice
			// finds more than it takes.
			cfg.Dir = t.TempDir()
			if s, err = Open(context.Background(), Config{Dir: cfg.Dir, Sync: SyncOff, NoProjection: true}); err != nil {
				t.Fatal(err)
			}
			if err := appendRows(s, perSlice); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer func() { sliceHook = nil }()
			s = openTest(t, cfg)
			waitProjected(t, s)
			logs := countRows(t, s, "logs")
			if err := s.Close(context.Background()); err != nil { // the projector is done with states
				t.Fatal(err)
			}
			if hookErr != nil {
				t.Fatalf("Append in the slice hook: %v", hookErr)
			}
			st := s.Stats()
			if want := appended * 10; logs != want || st.Logs.Records != uint64(want-perSlice*10) {
				t.Errorf("%d logs projected, %d appended since Open; want all %d, %d", logs, st.Logs.Records, want, want-perSlice*10)
			}
			deferred := slices.Contains(states, project.Deferring)
			t.Logf("states %v; %d slices, deferred %v over %d windows", states, slicesN, st.ProjectionDeferred, clock.windows.Load())
			if deferred != tc.wantDefer || (st.ProjectionDeferred > 0) != tc.wantDefer {
				t.Errorf("deferred: states %v, %v waited; want deferral %v", states, st.ProjectionDeferred, tc.wantDefer)
			}
			// The first slice finds a backlog and ingest idle (CatchingUp); the appends after the
			// slices keep the projector KeepingUp (or Deferring) until they stop.
			if i := slices.Index(states, project.KeepingUp); i < 0 || tc.wantDefer && !slices.Contains(states[i:], project.Deferring) {
				t.Errorf("states %v, want %v, then %v if deferring", states, project.KeepingUp, project.Deferring)
			}
			if last := states[len(states)-1]; last != project.Idle {
				t.Errorf("last slice left the projector %v, want %v", last, project.Idle)
			}
			if st.ProjectionDeferring {
				t.Error("still deferring after projection caught up")
			}
		})
	}
}
