package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
