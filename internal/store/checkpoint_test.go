package store

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// setVar sets *p to v for the test.
func setVar[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// TestWALBounded: the projector's commits leave checkpoints to the checkpointer, and the WAL
// stays within walLimitBytes plus about a slice whether the checkpointer runs or is starved (it
// never gets to run here), in which case the projector checkpoints itself.
func TestWALBounded(t *testing.T) {
	for _, starved := range []bool{false, true} {
		t.Run(fmt.Sprintf("starved=%t", starved), func(t *testing.T) {
			const limit = 1 << 20
			setVar(t, &walLimitBytes, limit)
			if starved {
				setVar(t, &checkpointEvery, time.Hour)
				setVar(t, &checkpointTick, time.Hour)
			}
			dir := t.TempDir()
			s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				appendLogs(t, s, makeLogs("svc", fmt.Sprintf("wal%d-", i), 500))
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}

			// The WAL's size after each slice, read by the projector between its commits.
			var maxWAL, slices atomic.Int64
			walPath := dir + "/" + FileName + "-wal"
			setVar(t, &sliceHook, func(*projector) {
				slices.Add(1)
				if fi, err := os.Stat(walPath); err == nil && fi.Size() > maxWAL.Load() {
					maxWAL.Store(fi.Size())
				}
			})
			s = openTest(t, Config{Dir: dir, ProjectSlice: 1}) // 500 logs a slice
			waitProjected(t, s)
			if n := countRows(t, s, "logs"); n != 20000 {
				t.Fatalf("logs rows: got %d, want 20000", n)
			}
			st := s.Stats()
			if starved && (st.Checkpoints != 0 || st.ProjectorCheckpoints == 0) {
				t.Errorf("starved checkpointer: %d checkpoints by it, %d by the projector; want 0 and some",
					st.Checkpoints, st.ProjectorCheckpoints)
			}
			if !starved {
				waitFor(t, "a checkpoint", func() bool { return s.Stats().Checkpoints > 0 })
			}
			db, err := os.Stat(dir + "/" + FileName)
			if err != nil {
				t.Fatal(err)
			}
			// The bound holds between slices, so the WAL may pass it by one slice (~0.6 MB of
			// 500 logs here). Without the bound it holds every page of every slice: ~24 MB.
			if got := maxWAL.Load(); got > 2*limit {
				t.Errorf("WAL reached %d bytes over %d slices (database %d bytes); want at most %d",
					got, slices.Load(), db.Size(), 2*limit)
			}
			t.Logf("WAL at most %d bytes over %d slices; database %d bytes; checkpoints %d by the checkpointer, %d by the projector",
				maxWAL.Load(), slices.Load(), db.Size(), st.Checkpoints, st.ProjectorCheckpoints)
		})
	}
}
