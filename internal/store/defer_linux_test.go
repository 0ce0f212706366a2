package store

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// TestReadCPUTimes reads the real /proc/stat and thread clock: burning CPU on this thread
// advances both the thread's time and the machine's busy time.
func TestReadCPUTimes(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := readCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	if before.busy <= 0 || before.total < before.busy || before.self < 0 {
		t.Fatalf("implausible cpu times %+v", before)
	}
	const burn = 300 * time.Millisecond
	var after cpuTimes
	deadline := time.Now().Add(20 * time.Second)
	for {
		if after, err = readCPUTimes(); err != nil {
			t.Fatal(err)
		}
		if after.self-before.self >= burn || time.Now().After(deadline) {
			break
		}
	}
	if got := after.self - before.self; got < burn {
		t.Fatalf("thread cpu time advanced %v in 20 s of spinning, want >= %v", got, burn)
	}
	// /proc/stat counts in ticks of 10 ms; 300 ms of CPU is at least 20 of them.
	if got := after.busy - before.busy; got < burn-100*time.Millisecond {
		t.Errorf("machine busy time advanced %v while this thread used %v", got, after.self-before.self)
	}
	if after.total-before.total < after.busy-before.busy {
		t.Errorf("total advanced less than busy: %+v -> %+v", before, after)
	}
}

// TestProjectionDefers drives a real store with a steady stream of appends while every CPU is
// kept busy: the idle-priority projector, which cannot keep up, defers, and catches up once
// the load stops. With deferral disabled or bounded below the lag, it never defers.
func TestProjectionDefers(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every CPU for seconds")
	}
	for _, tc := range []struct {
		name      string
		cfg       Config
		wantDefer bool
	}{
		{"default", Config{}, true},
		{"disabled", Config{ProjectDefer: -1}, false},
		{"bounded by records", Config{ProjectDeferRecords: 1}, false},
		{"normal priority", Config{ProjectPriority: PriorityNormal}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Logger = quietLogger
			cfg.ProjectSlice = 16 // the projector decides between slices: keep them short under -race
			s := openTest(t, cfg)
			stop := loadStore(t, s)
			if tc.wantDefer {
				waitFor(t, "the projector to defer", func() bool { return s.Stats().ProjectionDeferring })
			} else {
				// Longer than default needs to defer (not a timing assertion); short enough that the
				// backlog is caught up quickly under -race.
				time.Sleep(time.Second)
			}
			stop()
			stopped := time.Now()
			// The idle-priority (SCHED_IDLE) projector runs only on CPU nobody else wants, and CI
			// runs the other packages' tests beside this one: a fresh-clone run had not caught up
			// 30 s after the load stopped. The bound is for a hang, not a timing.
			waitWithin(t, 3*time.Minute, "projection to catch up", func() bool {
				st := s.Stats()
				return st.ProjectedRawID == st.LastRawID
			})
			st := s.Stats()
			t.Logf("%d logs appended; caught up %v after the load stopped", st.Logs.Records, time.Since(stopped).Round(time.Millisecond))
			if st.ProjectionDeferring {
				t.Error("still deferring after the load stopped and projection caught up")
			}
			if got := st.ProjectionDeferred > 0; got != tc.wantDefer {
				t.Errorf("deferred %v under load, want deferral %v", st.ProjectionDeferred, tc.wantDefer)
			}
			if st.WriterBusy <= 0 {
				t.Errorf("writer busy time %v after a steady stream of appends", st.WriterBusy)
			}
			if n, want := countRows(t, s, "logs"), int(st.Logs.Records); n != want {
				t.Errorf("%d logs projected, want all %d appended", n, want)
			}
		})
	}
}

// loadStore appends batches of 10 logs from 4 goroutines and keeps every CPU ~80% busy, until
// the returned stop is called or the test ends; stop waits for them all and fails t on an
// append error. The burners rest 1 ms in 5: a CPU that is never idle would starve the
// SCHED_IDLE projector outright, so it would never decide.
func loadStore(t *testing.T, s *Store) (stop func()) {
	t.Helper()
	ld := makeLogs("svc", "defer", 10)
	b, err := logsMarshaler.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	const appenders = 4
	errs := make(chan error, appenders)
	for range appenders {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := s.Append(ctx, signal.Logs, b, ld.LogRecordCount()); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		})
	}
	const spin = 4 * time.Millisecond
	for range runtime.NumCPU() {
		wg.Go(func() {
			for ctx.Err() == nil {
				for start := time.Now(); time.Since(start) < spin; {
				}
				time.Sleep(5*time.Millisecond - spin)
			}
		})
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			close(errs)
			for err := range errs {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	t.Cleanup(stop) // before the store's Close, which waits for the projector
	return stop
}
