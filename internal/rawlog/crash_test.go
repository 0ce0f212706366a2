package rawlog

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/crashtest"
	"github.com/otelbench/otelbench/internal/signal"
)

const crashChildEnv = "OTELBENCH_RAWLOG_CRASH_CHILD"

// runCrashChild is the child half of TestCrashKill9: it appends from 8 goroutines, each payload
// its own text, and prints "ack TEXT" after each Append returns nil, until it is killed (or a
// bound on count and time is reached, so a lost parent cannot leave it running).
func runCrashChild() int {
	l, err := Open(Config{Dir: os.Getenv(crashChildEnv), SegmentBytes: 64 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	l.Start()
	crashtest.AckEach(8, 5000, 30*time.Second, func(g, n int) (string, error) {
		text := fmt.Sprintf("crash-%s-%d-%d", os.Getenv(crashChildEnv+"_ROUND"), g, n)
		return text, l.Append(context.Background(), signal.All()[g%3], []byte(text), 1)
	})
	l.Close()
	return 0
}

// TestCrashKill9 kills a child appending under concurrent load with SIGKILL once it has
// acknowledged some appends, twice on the same directory: reopened, the log holds every
// acknowledged payload exactly once, every row's checksum verifies, and the durable totals
// count exactly the rows there.
func TestCrashKill9(t *testing.T) {
	dir := t.TempDir()
	for round := range 2 { // the second round crashes a log that already crashed once
		env := []string{crashChildEnv + "=" + dir, fmt.Sprintf("%s_ROUND=%d", crashChildEnv, round)}
		acked := crashtest.KillAfterAcks(t, env, 300*(round+1))
		l := openLog(t, Config{Dir: dir})
		present := map[string]int{}
		var rows uint64
		if err := l.Scan(func(r Row) error { present[string(r.Payload)]++; rows++; return nil }); err != nil {
			t.Fatalf("round %d: scan after kill -9: %v", round, err)
		}
		for _, text := range acked {
			if present[text] != 1 {
				t.Errorf("round %d: acked payload %q present %d times, want 1", round, text, present[text])
			}
		}
		for text, n := range present {
			if n != 1 {
				t.Errorf("round %d: payload %q present %d times", round, text, n)
			}
		}
		var total uint64
		for _, c := range l.Stats().Total {
			total += c.Requests
		}
		if total != rows {
			t.Errorf("round %d: totals count %d requests, the log holds %d rows", round, total, rows)
		}
		t.Logf("round %d: %d acked, %d stored", round, len(acked), rows)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
