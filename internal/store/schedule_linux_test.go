package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/signal"
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
		gotNice, gotPolicy, err := schedFields(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
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

// TestProjectorThreads checks that each projector (one per projected database) runs on a
// thread of its own under SCHED_IDLE, that it still projects, and that the threads go away with
// the store.
func TestProjectorThreads(t *testing.T) {
	const idle = project.SchedIdle
	if before := settleThreads(t, 0, idle, 0); before != 0 {
		t.Fatalf("%d threads under SCHED_IDLE before the store opened", before)
	}
	for _, tracesFile := range []bool{false, true} {
		s, err := Open(context.Background(), Config{Dir: t.TempDir(), Sync: SyncOff, TracesFile: tracesFile, Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		appendLogs(t, s, makeLogs("svc", "prio", 10))
		waitProjected(t, s)
		if n := countRows(t, s, "logs"); n != 10 {
			t.Errorf("traces file %v: %d logs projected, want 10", tracesFile, n)
		}
		if got := threadsWith(t, 0, idle); got != len(s.shards) {
			t.Errorf("traces file %v: %d threads under SCHED_IDLE while the store is open; want %d (the projectors)", tracesFile, got, len(s.shards))
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := settleThreads(t, 0, idle, 0); got != 0 {
			t.Errorf("traces file %v: %d threads left under SCHED_IDLE after Close; want the projectors' gone", tracesFile, got)
		}
	}
}

// schedFields returns the nice value and scheduling policy in a thread's stat file b (fields
// 19 and 41).
func schedFields(b []byte) (nice, policy int, err error) {
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:])) // from field 3 on
	nice, err1 := strconv.Atoi(f[19-3])
	policy, err2 := strconv.Atoi(f[41-3])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("fields 19 and 41 of %q", b)
	}
	return nice, policy, nil
}

// threadSched returns the calling thread's nice value and scheduling policy, or -1s after
// reporting an error (it runs on the projector's goroutine, where t.Fatal may not).
func threadSched(t *testing.T) (nice, policy int) {
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err == nil {
		nice, policy, err = schedFields(b)
	}
	if err != nil {
		t.Error(err)
		return -1, -1
	}
	return nice, policy
}

// TestCatchUpAtNormalPriority: the projector catches up a backlog at normal priority while
// ingest is idle. The first slice of the backlog runs on the projector's own thread, under
// SCHED_IDLE (the projector is Idle: nothing staged before it); it leaves the policy CatchingUp,
// so every slice after it, staged while the one before committed, runs on the boost worker at
// normal priority, and the last one, reaching the head, leaves it Idle. Every row is projected
// once.
func TestCatchUpAtNormalPriority(t *testing.T) {
	const sched, idle = 0, project.SchedIdle
	dir := t.TempDir()
	writeBacklog(t, dir, func(s *Store) {
		for i := range 10 {
			appendLogs(t, s, makeLogs("svc", fmt.Sprintf("backlog%d-", i), 5))
		}
	})
	type threadPrio struct {
		nice, policy int
		state        project.State // after the slice
	}
	seen := make(chan threadPrio, 100) // one per slice: 10 raw rows in slices of 2
	sliceHook = func(_ *Store, sh *shard, st project.State) {
		if !sh.signals.Has(signal.Logs) {
			return // traces.db's projector passing the logs rows by
		}
		nice, policy := threadSched(t)
		seen <- threadPrio{nice, policy, st}
	}
	defer func() { sliceHook = nil }()
	s := openTest(t, Config{Dir: dir, ProjectSlice: 2, Logger: quietLogger})
	waitProjected(t, s)
	if n := countRows(t, s, "logs"); n != 50 {
		t.Errorf("%d logs projected, want 50", n)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(seen)
	var got []threadPrio
	for x := range seen {
		got = append(got, x)
	}
	if len(got) != 5 {
		t.Fatalf("%d slices, want 5 (10 raw rows, 2 a slice)", len(got))
	}
	for i, x := range got {
		want := threadPrio{0, sched, project.CatchingUp} // catching up, ingest idle: the boost worker
		switch i {
		case 0:
			want = threadPrio{0, idle, project.CatchingUp} // nothing was staged before it
		case len(got) - 1:
			want.state = project.Idle
		}
		if x != want {
			t.Errorf("slice %d at nice %d, policy %d, leaving %v; want nice %d, policy %d, leaving %v",
				i+1, x.nice, x.policy, x.state, want.nice, want.policy, want.state)
		}
	}
	if n := settleThreads(t, 0, idle, 0); n != 0 {
		t.Errorf("%d threads left at SCHED_IDLE after Close", n)
	}
}
