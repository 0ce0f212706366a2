package query

import (
	"bufio"
	"context"
	"errors"
	"net"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	c, err := d.DialContext(context.Background(), "tcp", addr)
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
// heap stays far below the 64 private copies of each record they once
// cost.
func TestLogStreamNeverReadingClientsBoundedInBytes(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("ingests 350 MB; heap figures under the race detector are not the program's")
	}
	const (
		streams = 64
		records = 100
		size    = 3_500_000
		// The tail may hold DefaultTailTotalBytes; a poll reads
		// DefaultTailBatchBytes and encodes each record once; the store
		// holds a request and a projection slice of these records. 64
		// private copies of even one record would be 224 MB.
		maxGrowth = 192 << 20
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
	base := heapNow()
	stop := heapPeak(2 * time.Millisecond)
	var maxHeld int64
	body := strings.Repeat("x", size-10)
	for i := range records {
		e.appendLogs(t, logSpec{Service: "big", Sev: 9, Body: body + string(rune('a'+i%26)), At: time.Now()})
		maxHeld = max(maxHeld, e.api.Tailer().HeldBytes())
	}
	e.waitProjected(t)
	deadline := time.Now().Add(30 * time.Second)
	for e.api.Tailer().Subscribers() > 0 && time.Now().Before(deadline) {
		maxHeld = max(maxHeld, e.api.Tailer().HeldBytes())
		time.Sleep(10 * time.Millisecond)
	}
	peak := stop()
	growth := int64(peak) - int64(base)
	t.Logf("heap: base %d MB, peak %d MB, growth %d MB; tail held at most %d MB", base>>20, peak>>20, growth>>20, maxHeld>>20)
	if n := e.api.Tailer().Subscribers(); n != 0 {
		t.Errorf("subscribers left after the burst: got %d, want 0 (all dropped)", n)
	}
	if maxHeld > DefaultTailTotalBytes {
		t.Errorf("tail held %d bytes, want at most DefaultTailTotalBytes %d", maxHeld, DefaultTailTotalBytes)
	}
	if growth > maxGrowth {
		t.Errorf("heap grew by %d MB during the burst, want at most %d MB", growth>>20, maxGrowth>>20)
	}
}
