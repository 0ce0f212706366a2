package seglog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/crashtest"
)

const crashChildEnv = "OTELBENCH_SEGLOG_CRASH_CHILD"

// runCrashChild is the child half of TestCrashKill9: 8 goroutines hand records to one writer
// goroutine that writes them in groups and overlaps each group's fsync with the next write, as
// a server's writer would; after WaitDurable it prints "ack ID" for each, until it is killed
// (or bounded in count and time, so a lost parent cannot leave it running).
func runCrashChild() int {
	l, err := Open(Config{Dir: os.Getenv(crashChildEnv), SegmentBytes: 256 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	type req struct{ done chan int64 }
	reqs := make(chan req, 64)
	deadline := time.Now().Add(30 * time.Second)
	go func() { // the writer: takes what is queued, writes it, answers after the fsync
		var batch []Entry
		var waiting []req
		for r := range reqs {
			waiting = append(waiting[:0], r)
		more:
			for len(waiting) < 64 {
				select {
				case r := <-reqs:
					waiting = append(waiting, r)
				default:
					break more
				}
			}
			batch = batch[:0]
			l.mu.Lock()
			first := l.next
			l.mu.Unlock()
			for i := range waiting {
				batch = append(batch, entryOf(first+int64(i)))
			}
			f, last, err := l.Write(batch)
			if err != nil || f != first {
				fmt.Fprintln(os.Stderr, "write:", err, f, first)
				os.Exit(1)
			}
			if err := l.WaitDurable(context.Background(), last); err != nil {
				fmt.Fprintln(os.Stderr, "wait:", err)
				os.Exit(1)
			}
			for i, w := range waiting {
				w.done <- first + int64(i)
			}
		}
	}()
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for n := 0; n < 20000 && time.Now().Before(deadline); n++ {
				r := req{done: make(chan int64, 1)}
				reqs <- r
				id := <-r.done
				mu.Lock()
				fmt.Fprintf(out, "ack %d\n", id)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

// TestCrashKill9 kills a child appending under concurrent load with SIGKILL, several rounds on
// one directory, and reopens: every acknowledged id is there, in order, payload intact, and ids
// go on increasing in the next round.
func TestCrashKill9(t *testing.T) {
	dir := t.TempDir()
	var maxAcked int64
	for round := range 3 {
		acked := crashChild(t, dir, 3000) // ~2 MB: several rolls of 256 KiB segments
		l := openLog(t, Config{Dir: dir, SegmentBytes: 256 << 10})
		durable := l.Durable()
		prevMax := maxAcked
		for _, id := range acked {
			if id <= prevMax {
				t.Fatalf("round %d: id %d acknowledged again (an earlier round acked up to %d)", round, id, prevMax)
			}
			if id > durable {
				t.Fatalf("round %d: acked id %d beyond the recovered log's last id %d", round, id, durable)
			}
			maxAcked = max(maxAcked, id)
		}
		checkRows(t, l, 0, Limits{}, 1, durable) // every id, in order, payload intact
		t.Logf("round %d: %d acked, %d stored", round, len(acked), durable)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// crashChild starts the child on dir, kills it with SIGKILL after minAcks acknowledgements and
// returns every id it acknowledged (including those printed just before it died).
func crashChild(t *testing.T, dir string, minAcks int) []int64 {
	t.Helper()
	var acked []int64
	for _, text := range crashtest.KillAfterAcks(t, []string{crashChildEnv + "=" + dir}, minAcks) {
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", "ack "+text)
		}
		acked = append(acked, id)
	}
	return acked
}
