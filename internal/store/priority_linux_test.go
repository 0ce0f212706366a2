package store

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadsWith counts this process's threads whose nice value is nice and policy is policy,
// from /proc/self/task/*/stat (fields 19 and 41).
func threadsWith(t *testing.T, nice, policy int) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:])) // from field 3 on
		gotNice, err1 := strconv.Atoi(f[19-3])
		gotPolicy, err2 := strconv.Atoi(f[41-3])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: fields 19 and 41 of %q", path, b)
		}
		if gotNice == nice && gotPolicy == policy {
			n++
		}
	}
	return n
}

// settleThreads waits (up to 5 s) until threadsWith reports want: a goroutine locked to its
// thread has returned before the runtime has ended the thread.
func settleThreads(t *testing.T, nice, policy, want int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := threadsWith(t, nice, policy)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// TestProjectorPriority checks that the projector runs on a thread of its own at the priority
// asked for, that it still projects, and that the thread goes away with the store.
func TestProjectorPriority(t *testing.T) {
	const sched, batch, idle = 0, 3, schedIdle // SCHED_OTHER, SCHED_BATCH, SCHED_IDLE
	for _, tc := range []struct {
		prio         Priority
		nice, policy int
	}{
		{PriorityLow, 19, sched},
		{PriorityIdle, 0, idle},
		{"", 0, idle}, // the default
	} {
		t.Run(string(tc.prio), func(t *testing.T) {
			before := 0
			if tc.policy == idle || tc.nice == 19 {
				if before = settleThreads(t, tc.nice, tc.policy, 0); before != 0 {
					t.Fatalf("%d threads at nice %d, policy %d before the store opened", before, tc.nice, tc.policy)
				}
			}
			s, err := Open(context.Background(), Config{Dir: t.TempDir(), Sync: SyncOff, ProjectPriority: tc.prio, Logger: quietLogger})
			if err != nil {
				t.Fatal(err)
			}
			appendLogs(t, s, makeLogs("svc", "prio", 10))
			waitProjected(t, s)
			if n := countRows(t, s, "logs"); n != 10 {
				t.Errorf("%d logs projected, want 10", n)
			}
			if got := threadsWith(t, tc.nice, tc.policy) - before; got != 1 {
				t.Errorf("%d more threads at nice %d, policy %d while the store is open; want 1 (the projector)", got, tc.nice, tc.policy)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := settleThreads(t, tc.nice, tc.policy, before) - before; got != 0 {
				t.Errorf("%d threads left at nice %d, policy %d after Close; want the projector's gone", got, tc.nice, tc.policy)
			}
		})
	}
	// Normal: no thread changes.
	settleThreads(t, 19, sched, 0)
	settleThreads(t, 0, idle, 0)
	s := openTest(t, Config{Sync: SyncOff, ProjectPriority: PriorityNormal})
	appendLogs(t, s, makeLogs("svc", "prio", 3))
	waitProjected(t, s)
	if n := threadsWith(t, 19, sched) + threadsWith(t, 0, idle) + threadsWith(t, 0, batch); n != 0 {
		t.Errorf("%d threads at a lowered priority with PriorityNormal", n)
	}
}
