package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

func TestAppendStoresRaw(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, Config{Dir: dir, NoProjection: true})
	ctx := context.Background()
	want := map[int64][]byte{}
	for i := range 10 {
		p := []byte(fmt.Sprintf("payload-%d", i))
		sig := signal.All()[i%3]
		if err := s.Append(ctx, sig, p, i+1); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		want[int64(i+1)] = p
	}
	n := 0
	err := s.ScanRaw(func(r rawlog.Row) error {
		if !bytes.Equal(r.Payload, want[r.ID]) {
			t.Errorf("raw %d payload: got %q, want %q", r.ID, r.Payload, want[r.ID])
		}
		if r.Signal != signal.All()[(r.ID-1)%3] || r.Records != r.ID {
			t.Errorf("raw %d: got signal %d records %d", r.ID, r.Signal, r.Records)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Fatalf("got %d raw rows, want 10", n)
	}
	st := s.Stats()
	if got := st.Logs.Requests + st.Metrics.Requests + st.Traces.Requests; got != 10 {
		t.Errorf("Stats requests: got %d, want 10", got)
	}
	if st.Logs.Records != 1+4+7+10 {
		t.Errorf("Stats logs records: got %d, want 22", st.Logs.Records)
	}
	if st.LagRecords != 55 || st.LastRawID != 10 {
		t.Errorf("Stats lag: got %d records, last raw id %d; want 55, 10", st.LagRecords, st.LastRawID)
	}
}

func TestAppendInvalid(t *testing.T) {
	s := openTest(t, Config{NoProjection: true})
	if err := s.Append(context.Background(), 0, []byte("x"), 1); err == nil {
		t.Error("Append with signal 0: got nil error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, signal.Logs, []byte("x"), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with cancelled ctx: got %v, want context.Canceled", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"minimal", Config{Dir: "x"}, true},
		{"no dir", Config{}, false},
		{"bad sync", Config{Dir: "x", Sync: "sometimes"}, false},
		{"normal sync", Config{Dir: "x", Sync: SyncNormal}, true},
		{"negative queue", Config{Dir: "x", QueueBytes: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Errorf("Validate: got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestGroupCommitBatches holds SQLite's write lock from another connection while many callers
// append, so they all queue; releasing it must commit them in at most two transactions (the
// request the writer took first, then everything else).
func TestGroupCommitBatches(t *testing.T) {
	s := openTest(t, Config{NoProjection: true})
	release := holdWriteLock(t, s)
	defer release()
	const n = 50
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- s.Append(context.Background(), signal.Logs, []byte(fmt.Sprint(i)), 1) })
	}
	waitFor(t, "all appends queued", func() bool { return s.Stats().QueueRequests == n })
	before := s.Stats().Commits
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	st := s.Stats()
	if commits := st.Commits - before; commits > 2 {
		t.Errorf("commits for %d queued appends: got %d, want <= 2", n, commits)
	}
	if st.Logs.Requests != n || rawCount(t, s) != n {
		t.Errorf("stored: got %d requests, %d rows; want %d", st.Logs.Requests, rawCount(t, s), n)
	}
}

// TestQueueFull fills a one-request queue while the writer is blocked on another connection's
// write lock: the next Append must fail at once with ErrQueueFull, and the first must succeed.
func TestQueueFull(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		size int
	}{
		{"requests", Config{QueueRequests: 1}, 10},
		{"bytes", Config{QueueBytes: 100}, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.NoProjection = true
			s := openTest(t, tt.cfg)
			release := holdWriteLock(t, s)
			defer release()
			first := make(chan error, 1)
			go func() { first <- s.Append(context.Background(), signal.Logs, make([]byte, tt.size), 1) }()
			waitFor(t, "first append queued", func() bool { return s.Stats().QueueRequests == 1 })
			if err := s.Append(context.Background(), signal.Logs, make([]byte, tt.size), 1); !errors.Is(err, ErrQueueFull) {
				t.Errorf("second Append: got %v, want ErrQueueFull", err)
			}
			release()
			if err := <-first; err != nil {
				t.Errorf("first Append: %v", err)
			}
			if st := s.Stats(); st.QueueFull != 1 || st.QueueRequests != 0 || st.QueueBytes != 0 {
				t.Errorf("Stats: got QueueFull %d, queue %d/%d; want 1, 0/0", st.QueueFull, st.QueueRequests, st.QueueBytes)
			}
		})
	}
}

// TestCloseDrains closes the store while appends are queued behind a held write lock: every
// append must be answered nil and stored, and appends after Close get ErrClosed.
func TestCloseDrains(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, Logger: quietLogger}) // payloads are not OTLP
	if err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, s)
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- s.Append(context.Background(), signal.Traces, []byte(fmt.Sprint(i)), 1) }()
	}
	waitFor(t, "appends queued", func() bool { return s.Stats().QueueRequests == n })
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	waitFor(t, "close started", func() bool { return s.closed.Load() })
	if err := s.Append(context.Background(), signal.Traces, []byte("late"), 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Append during Close: got %v, want ErrClosed", err)
	}
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("queued Append: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Append(context.Background(), signal.Traces, []byte("after"), 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: got %v, want ErrClosed", err)
	}
	s2 := openTest(t, Config{Dir: dir, NoProjection: true})
	if got := rawCount(t, s2); got != n {
		t.Errorf("raw rows after reopen: got %d, want %d", got, n)
	}
}

// TestAppendCancelWhileQueued cancels an append still waiting in the queue: it returns the
// context error and is not stored.
func TestAppendCancelWhileQueued(t *testing.T) {
	s := openTest(t, Config{NoProjection: true})
	release := holdWriteLock(t, s)
	defer release()
	first := make(chan error, 1)
	go func() { first <- s.Append(context.Background(), signal.Logs, []byte("first"), 1) }()
	waitFor(t, "first queued", func() bool { return s.Stats().QueueRequests == 1 })
	// The writer takes "first" and is held; "second" stays queued behind it.
	waitFor(t, "writer busy", func() bool {
		s.q.mu.Lock()
		defer s.q.mu.Unlock()
		return len(s.q.items) == 0
	})
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- s.Append(ctx, signal.Logs, []byte("second"), 1) }()
	waitFor(t, "second queued", func() bool { return s.Stats().QueueRequests == 2 })
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Append: got %v, want context.Canceled", err)
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("first Append: %v", err)
	}
	waitFor(t, "queue empty", func() bool { return s.Stats().QueueRequests == 0 })
	if got := rawCount(t, s); got != 1 {
		t.Errorf("raw rows: got %d, want 1", got)
	}
}
