package query

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// memSource is an in-memory LogSource for the broadcaster's own tests; the
// API tests exercise the tailer against the real store.
type memSource struct {
	mu   sync.Mutex
	logs []Log
}

func (m *memSource) add(body, service string, sev int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, Log{ID: int64(len(m.logs) + 1), Body: body, Service: service, SeverityNumber: sev})
}

func (m *memSource) LogsAfter(_ context.Context, after int64, limit int) ([]Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Log
	for _, l := range m.logs {
		if l.ID > after && len(out) < limit {
			out = append(out, l)
		}
	}
	return out, nil
}

func (m *memSource) MaxLogID(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.logs)), nil
}

func startTailer(t *testing.T, src LogSource, cfg TailConfig) *Tailer {
	t.Helper()
	tl := NewTailer(src, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return tl
}

func TestTailerDeliversOnlyNewMatching(t *testing.T) {
	src := &memSource{}
	src.add("old record", "a", 9)
	tl := startTailer(t, src, TailConfig{Poll: 10 * time.Millisecond})
	sub, err := tl.Subscribe(context.Background(), LogFilter{Service: "a", Q: "NEEDLE", SeverityMin: 9})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	src.add("has needle but wrong service", "b", 9)
	src.add("has needle but debug", "a", 5)
	src.add("no match", "a", 9)
	src.add("a Needle here", "a", 13)
	tl.Wake()
	select {
	case l := <-sub.C:
		if l.Body != "a Needle here" {
			t.Errorf("got %q, want %q", l.Body, "a Needle here")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no record delivered")
	}
	select {
	case l := <-sub.C:
		t.Errorf("unexpected second record %q", l.Body)
	default:
	}
}

func TestTailerDropsSlowSubscriber(t *testing.T) {
	src := &memSource{}
	tl := startTailer(t, src, TailConfig{Buffer: 4, Batch: 3, Poll: 10 * time.Millisecond})
	slow, err := tl.Subscribe(context.Background(), LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := tl.Subscribe(context.Background(), LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	const n = 50
	got := 0
	for i := range n {
		src.add(fmt.Sprintf("r%d", i), "s", 9)
		tl.Wake()
		// the fast reader keeps up; the slow one never reads
		select {
		case <-fast.C:
			got++
		case <-time.After(10 * time.Second):
			t.Fatalf("fast subscriber starved at %d", i)
		}
	}
	if got != n {
		t.Errorf("fast got %d, want %d", got, n)
	}
	// slow's channel was closed after its 4 buffered records
	count := 0
	for range slow.C {
		count++
	}
	if count != 4 {
		t.Errorf("slow drained %d buffered records, want 4", count)
	}
	if !slow.Dropped() {
		t.Error("slow subscriber not marked dropped")
	}
	if fast.Dropped() {
		t.Error("fast subscriber dropped")
	}
	if n := tl.Subscribers(); n != 1 {
		t.Errorf("subscribers: got %d, want 1", n)
	}
}

func TestTailerLimitAndStop(t *testing.T) {
	src := &memSource{}
	tl := NewTailer(src, TailConfig{MaxClients: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	s, err := tl.Subscribe(context.Background(), LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Subscribe(context.Background(), LogFilter{}); err != ErrTooManyTails {
		t.Errorf("second subscribe: got %v, want ErrTooManyTails", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := <-s.C; ok {
		t.Error("channel open after stop")
	}
	s.Close() // after stop: no panic
	if _, err := tl.Subscribe(context.Background(), LogFilter{}); err != ErrTailStopped {
		t.Errorf("subscribe after stop: got %v, want ErrTailStopped", err)
	}
}
