package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

func (m *memSource) LogsAfter(_ context.Context, after int64, limit, maxBytes int) ([]Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Log
	size := 0
	for _, l := range m.logs {
		if l.ID > after && len(out) < limit && size < maxBytes {
			out = append(out, l)
			size += len(l.Body)
		}
	}
	return out, nil
}

// takeLog waits up to wait for sub's next record; ok is false when the
// subscription ended or nothing came.
func takeLog(t *testing.T, sub *TailSub, wait time.Duration) (l Log, ok bool) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		evs, ended := sub.Take(nil, 1)
		if len(evs) == 1 {
			sub.Release(evs)
			return decodeFrame(t, evs[0].Data), true
		}
		if ended {
			return Log{}, false
		}
		select {
		case <-sub.Ready():
		case <-timer.C:
			return Log{}, false
		}
	}
}

// decodeFrame decodes the Log of one SSE frame.
func decodeFrame(t *testing.T, frame []byte) Log {
	t.Helper()
	_, data, ok := strings.Cut(string(frame), "\ndata: ")
	if !ok || !strings.HasSuffix(data, "\n\n") {
		t.Fatalf("malformed frame %q", frame)
	}
	var l Log
	if err := json.Unmarshal([]byte(strings.TrimSuffix(data, "\n\n")), &l); err != nil {
		t.Fatalf("frame %q: %v", frame, err)
	}
	return l
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
	l, ok := takeLog(t, sub, 10*time.Second)
	if !ok {
		t.Fatal("no record delivered")
	}
	if l.Body != "a Needle here" {
		t.Errorf("got %q, want %q", l.Body, "a Needle here")
	}
	if l, ok := takeLog(t, sub, 50*time.Millisecond); ok {
		t.Errorf("unexpected second record %q", l.Body)
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
		if _, ok := takeLog(t, fast, 10*time.Second); !ok {
			t.Fatalf("fast subscriber starved at %d", i)
		}
		got++
	}
	if got != n {
		t.Errorf("fast got %d, want %d", got, n)
	}
	// slow was ended when its 4-record buffer overflowed, and its queue
	// freed at once: what it had not taken is gone.
	count := 0
	for {
		if _, ok := takeLog(t, slow, time.Second); !ok {
			break
		}
		count++
	}
	if count != 0 {
		t.Errorf("slow drained %d records after its drop, want 0", count)
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
	if evs, ended := s.Take(nil, 1); len(evs) != 0 || !ended {
		t.Errorf("after stop: got %d events, ended %v; want 0, true", len(evs), ended)
	}
	s.Close() // after stop: no panic
	if _, err := tl.Subscribe(context.Background(), LogFilter{}); err != ErrTailStopped {
		t.Errorf("subscribe after stop: got %v, want ErrTailStopped", err)
	}
}

// TestTailerByteBounds: subscribers share one encoded frame per record; when
// the frames held for all of them pass TotalBytes the subscriber holding the
// most is dropped first; one holding more than SubscriberBytes is dropped.
// Polls happen only on Wake (Poll is an hour), so each step publishes
// exactly the records added before it.
func TestTailerByteBounds(t *testing.T) {
	src := &memSource{}
	body := strings.Repeat("b", 1000) // a frame is ~1.1 KB
	tl := startTailer(t, src, TailConfig{SubscriberBytes: 1 << 20, TotalBytes: 4000, Poll: time.Hour})
	behind, _ := tl.Subscribe(context.Background(), LogFilter{})
	defer behind.Close()
	src.add(body+"0", "s", 9)
	src.add(body+"1", "s", 9)
	tl.Wake()
	waitHeld(t, tl, 2)
	mid, _ := tl.Subscribe(context.Background(), LogFilter{})
	defer mid.Close()
	reader, _ := tl.Subscribe(context.Background(), LogFilter{})
	defer reader.Close()
	src.add(body+"2", "s", 9)
	tl.Wake()
	waitQueued(t, reader)
	waitQueued(t, mid)
	a, _ := reader.Take(nil, 1)
	b, _ := mid.Take(nil, 1)
	if len(a) != 1 || len(b) != 1 || &a[0].Data[0] != &b[0].Data[0] {
		t.Fatalf("subscribers got separate encodings of one record")
	}
	reader.Release(a)
	mid.Release(b)
	// A fourth frame brings the distinct frames held to ~4.4 KB: behind
	// holds all four, mid one, reader one.
	src.add(body+"3", "s", 9)
	tl.Wake()
	if _, ok := takeLog(t, reader, 10*time.Second); !ok {
		t.Fatal("reader starved")
	}
	if !behind.Dropped() || mid.Dropped() || reader.Dropped() {
		t.Errorf("dropped: behind %v, mid %v, reader %v; want only behind (it holds the most)",
			behind.Dropped(), mid.Dropped(), reader.Dropped())
	}
	if held := tl.HeldBytes(); held > 4000 {
		t.Errorf("held %d bytes, want at most TotalBytes 4000", held)
	}

	one := startTailer(t, src, TailConfig{SubscriberBytes: 2500, Poll: time.Hour})
	sub, _ := one.Subscribe(context.Background(), LogFilter{})
	defer sub.Close()
	for i := range 3 {
		src.add(body+strings.Repeat("x", i), "s", 9)
	}
	one.Wake()
	// Not reading: the three frames arrive together and the third passes
	// the bound.
	deadline := time.Now().Add(10 * time.Second)
	for !sub.Dropped() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	evs, ended := sub.Take(nil, 1)
	if !sub.Dropped() || len(evs) != 0 || !ended || one.HeldBytes() != 0 {
		t.Errorf("past SubscriberBytes: dropped %v, %d events left, ended %v, held %d; want true, 0, true, 0",
			sub.Dropped(), len(evs), ended, one.HeldBytes())
	}
}

func waitQueued(t *testing.T, s *TailSub) {
	t.Helper()
	select {
	case <-s.Ready():
		s.signal() // leave it for Take
	case <-time.After(10 * time.Second):
		t.Fatal("nothing queued")
	}
}

// waitHeld waits until the tailer holds n frames' worth of bytes or more.
func waitHeld(t *testing.T, tl *Tailer, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for tl.HeldBytes() < n*1000 {
		if time.Now().After(deadline) {
			t.Fatalf("held %d bytes, want %d frames", tl.HeldBytes(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
