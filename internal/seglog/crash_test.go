package seglog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/crashtest"
)

const (
	crashChildEnv = "OTELBENCH_SEGLOG_CRASH_CHILD"
	// crashPruneEnv makes the child delete all but its last segments as it goes, so that its
	// rolls recycle spare segments and it is killed while writing into a recycled file.
	crashPruneEnv = "OTELBENCH_SEGLOG_CRASH_PRUNE"
)

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
	prune := os.Getenv(crashPruneEnv) != ""
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
			if segs := l.Segments(); prune && len(segs) > 3 {
				if _, _, err := l.DeleteThrough(segs[len(segs)-3].Last); err != nil {
					fmt.Fprintln(os.Stderr, "delete:", err)
					os.Exit(1)
				}
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
// one directory, and reopens: every acknowledged id that was not deleted is there, in order,
// payload intact, and ids go on increasing in the next round. With pruning, the child deletes
// old segments as it goes, so its rolls take spare segments and it dies writing into a recycled
// file, whose older records follow the tail.
func TestCrashKill9(t *testing.T) {
	for _, tt := range []struct {
		name  string
		prune bool
	}{{"no deletes", false}, {"recycled segments", true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{crashChildEnv + "=" + dir}
			if tt.prune {
				env = append(env, crashPruneEnv+"=1")
			}
			var maxAcked int64
			recycled := 0
			for round := range 3 {
				acked := crashChild(t, env, 3000) // ~2 MB: several rolls of 256 KiB segments
				if staleRecordAfterTail(t, dir) {
					recycled++
				}
				l := openLog(t, Config{Dir: dir, SegmentBytes: 256 << 10})
				st := l.Stats()
				prevMax := maxAcked
				for _, id := range acked {
					if id <= prevMax {
						t.Fatalf("round %d: id %d acknowledged again (an earlier round acked up to %d)", round, id, prevMax)
					}
					if id > st.Durable {
						t.Fatalf("round %d: acked id %d beyond the recovered log's last id %d", round, id, st.Durable)
					}
					maxAcked = max(maxAcked, id)
				}
				first := max(st.First, 1)
				if !tt.prune && first != 1 {
					t.Fatalf("round %d: first id %d, want 1 (nothing deleted)", round, first)
				}
				checkRows(t, l, 0, Limits{}, first, st.Durable) // every id, in order, payload intact
				t.Logf("round %d: %d acked, ids %d..%d stored, %d spares", round, len(acked), first, st.Durable, st.Spares)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if tt.prune && recycled == 0 {
				t.Errorf("the child was never killed writing into a recycled segment (3 rounds)")
			}
		})
	}
}

// staleRecordAfterTail reports whether the last segment in dir holds, after its records, a
// whole record of an older generation (a valid checksum, an id below the segment's first): the
// segment is a recycled spare.
func staleRecordAfterTail(t *testing.T, dir string) bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var first int64
	for _, e := range ents {
		if id, ok := parseSegmentName(e.Name()); ok && id > first {
			name, first = e.Name(), id
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for off := fileHeaderSize; off+headerSize <= len(b); off++ {
		h, err := parseHeader(b[off:])
		if err != nil || h.id <= 0 || h.id >= first || off+headerSize+int(h.length) > len(b) {
			continue
		}
		if recordCRC(b[off:off+headerSize], b[off+headerSize:off+headerSize+int(h.length)]) == h.crc {
			return true
		}
	}
	return false
}

// crashChild starts the child with env, kills it with SIGKILL after minAcks acknowledgements and
// returns every id it acknowledged (including those printed just before it died).
func crashChild(t *testing.T, env []string, minAcks int) []int64 {
	t.Helper()
	var acked []int64
	for _, text := range crashtest.KillAfterAcks(t, env, minAcks) {
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", "ack "+text)
		}
		acked = append(acked, id)
	}
	return acked
}
