package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/validtest"
)

// TestAppendStoresRaw: Append stores through the raw log (whose own tests check the rows), and
// Stats copies the raw log's counters and counts the appended records as projection lag.
func TestAppendStoresRaw(t *testing.T) {
	s := openTest(t, Config{NoProjection: true})
	for i := range 10 {
		if err := s.Append(context.Background(), signal.All()[i%3], []byte(fmt.Sprintf("payload-%d", i)), i+1); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	if n := rawCount(t, s); n != 10 {
		t.Fatalf("got %d raw rows, want 10", n)
	}
	st := s.Stats()
	if got := st.Logs.Requests + st.Metrics.Requests + st.Traces.Requests; got != 10 {
		t.Errorf("Stats requests: got %d, want 10", got)
	}
	if st.Logs.Records != 1+4+7+10 || st.Durable.Logs.Records != st.Logs.Records {
		t.Errorf("Stats logs records: got %d (durable %d), want 22", st.Logs.Records, st.Durable.Logs.Records)
	}
	if st.LagRecords != 55 || st.LastRawID != 10 || st.Commits == 0 {
		t.Errorf("Stats: got %d records of lag, last raw id %d, %d commits; want 55, 10, > 0", st.LagRecords, st.LastRawID, st.Commits)
	}
}

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"minimal", Config{Dir: "x"}, nil},
		{"no dir", Config{}, validtest.Invalid},
		{"bad sync", Config{Dir: "x", Sync: "sometimes"}, validtest.Invalid},
		{"normal sync", Config{Dir: "x", Sync: SyncNormal}, nil},
		{"negative queue", Config{Dir: "x", QueueBytes: -1}, validtest.Invalid},
	})
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
	polltest.Until(t, "appends queued", func() bool { return s.Stats().QueueRequests == n })
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	polltest.Until(t, "close started", func() bool { return s.closed.Load() })
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
