package query

import (
	"bufio"
	"context"
	"math"
	"net"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/racetest"
)

// heapPeak samples the heap's live object bytes until stop is called and
// returns the highest sample.
func heapPeak(every time.Duration) (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// heapNow collects garbage and returns the heap's live object bytes.
func heapNow() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// dialNeverRead opens a live tail over a raw socket with a tiny receive
// buffer, reads up to the subscribed comment, and never reads again.
func dialNeverRead(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := smallRecvDialer().DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte("GET /api/v1/logs/stream HTTP/1.1\r\nHost: test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(c, 16) // buffer nothing past the comment
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read stream head: %v", err)
		}
		if strings.HasPrefix(line, ": subscribed") {
			return c
		}
	}
}

// TestLogStreamNeverReadingClientsBoundedInBytes: the live tail's memory is
// bounded in bytes whatever the records' size. 64 streams that never read
// (real sockets with tiny buffers) and 100 records of 3.5 MB: every stream
// is dropped, the bytes held for them never pass the total bound, and the
// heap this package holds for them stays within that bound and a poll's
// read, far below the 64 private copies of a record (224 MB) they once cost.
//
// The test weighs the heap the tail holds (tailHeap: 10-30 MB, one poll's
// read and its encoding), not the whole heap. The store in the same process
// holds 45-75 MB live between requests projecting these records, the same
// with streams or without (the projection slice, its prefetch and their
// arena, in heap profiles), and the heap's size peaks at about twice its
// live bytes and more when a busy machine delays the GC: 150-250 MB. A bound
// on the whole heap weighed the store and the GC's pace, not the tail.
func TestLogStreamNeverReadingClientsBoundedInBytes(t *testing.T) {
	if testing.Short() || racetest.Enabled {
		t.Skip("ingests 350 MB; heap figures under the race detector are not the program's")
	}
	const (
		streams = 64
		records = 100
		size    = 3_500_000
		// The tail holds at most DefaultTailTotalBytes of encoded events.
		// A poll reads DefaultTailBatchBytes of record text and the record
		// that passes it, and encodes each record once. The streams' own
		// buffers are a few kilobytes each.
		maxTailHeap = DefaultTailTotalBytes + 2*(DefaultTailBatchBytes+size) + 4<<20
	)
	e := newEnvListener(t, Config{SSEWriteTimeout: time.Minute},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	addr := strings.TrimPrefix(e.base, "http://")
	for range streams {
		dialNeverRead(t, addr)
	}
	if n := e.api.Tailer().Subscribers(); n != streams {
		t.Fatalf("subscribers: got %d, want %d", n, streams)
	}
	base, _ := tailHeap()
	var maxHeld, maxHeap, maxTail int64
	sample := func() {
		maxHeld = max(maxHeld, e.api.Tailer().HeldBytes())
		heap, tail := tailHeap()
		maxHeap, maxTail = max(maxHeap, heap), max(maxTail, tail)
	}
	body := strings.Repeat("x", size-10)
	for i := range records {
		e.appendLogs(t, logSpec{Service: "big", Sev: 9, Body: body + string(rune('a'+i%26)), At: time.Now()})
		sample()
	}
	e.waitProjected(t)
	deadline := time.Now().Add(30 * time.Second)
	for e.api.Tailer().Subscribers() > 0 && time.Now().Before(deadline) {
		sample()
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("live heap: base %d MB, peak %d MB, of which the tail %d MB; tail held at most %d MB",
		base>>20, maxHeap>>20, maxTail>>20, maxHeld>>20)
	if n := e.api.Tailer().Subscribers(); n != 0 {
		t.Errorf("subscribers left after the burst: got %d, want 0 (all dropped)", n)
	}
	if maxHeld > DefaultTailTotalBytes {
		t.Errorf("tail held %d bytes, want at most DefaultTailTotalBytes %d", maxHeld, DefaultTailTotalBytes)
	}
	if maxTail > maxTailHeap {
		t.Errorf("the tail's live heap peaked at %d MB, want at most %d MB", maxTail>>20, maxTailHeap>>20)
	}
}

// tailHeap collects garbage and returns the heap's live object bytes and,
// of those, the bytes allocated by this package's non-test code: the
// tail's reads, its encoded events and the streams' writes. It reads the
// heap profile, which runtime.GC brings up to date; sampled bytes are scaled
// up the way pprof scales them.
func tailHeap() (heap, tail int64) {
	heap = int64(heapNow())
	var recs []runtime.MemProfileRecord
	n, ok := runtime.MemProfile(nil, false)
	for !ok {
		recs = make([]runtime.MemProfileRecord, n+64)
		n, ok = runtime.MemProfile(recs, false)
	}
	rate := float64(runtime.MemProfileRate)
	for _, r := range recs[:n] {
		if r.AllocObjects == 0 || !allocatedByQuery(r.Stack()) {
			continue
		}
		avg := float64(r.AllocBytes) / float64(r.AllocObjects)
		tail += int64(float64(r.InUseBytes()) / (1 - math.Exp(-avg/rate)))
	}
	return heap, tail
}

// allocatedByQuery reports whether stack passes through this package's
// non-test code.
func allocatedByQuery(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "github.com/otelbench/otelbench/internal/query.") && !strings.HasSuffix(f.File, "_test.go") {
			return true
		}
		if !more {
			return false
		}
	}
}
