package store

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

// rawIDs returns the ids a projector of s's first shard reads from the raw log now.
func rawIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	r := rawlog.OpenReader(s.raw, s.shards[0].filter())
	defer r.Close()
	var rows []rawlog.Row
	if err := r.Read(&rows, 0, rawlog.Limits{Rows: 100, Records: 1 << 40, Bytes: 1 << 40}); err != nil {
		t.Fatalf("read the raw log: %v", err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// A group is answered only after the fsync that follows its write, and until then no reader of
// the raw log, the projectors' included, sees it although it is written.
func TestSyncFullAnswersAfterFsync(t *testing.T) {
	s := openTest(t, Config{Dir: t.TempDir(), NoProjection: true})
	ctx := context.Background()
	if err := s.Append(ctx, signal.Logs, []byte("first"), 1); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	hold := func() error {
		close(entered)
		<-release
		return nil
	}
	s.raw.SetSyncHook(hold)
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, signal.Logs, []byte("second"), 2) }()
	<-entered // the second group is committed; its fsync waits

	select {
	case err := <-done:
		t.Fatalf("Append returned %v before its fsync", err)
	default:
	}
	st := s.Stats()
	if st.Commits != 2 || st.Syncs != 1 || st.LastRawID != 1 || st.Logs.Requests != 1 || st.Logs.Records != 1 {
		t.Errorf("between commit and fsync: commits %d syncs %d last raw id %d requests %d records %d; want 2 1 1 1 1",
			st.Commits, st.Syncs, st.LastRawID, st.Logs.Requests, st.Logs.Records)
	}
	if n := rawCount(t, s); n != 1 {
		t.Fatalf("raw log readers see %d rows, want 1 (the second is written, not durable)", n)
	}
	if ids := rawIDs(t, s); len(ids) != 1 || ids[0] != 1 {
		t.Errorf("a projector reads raw ids %v before the fsync, want [1]", ids)
	}

	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Append after its fsync: %v", err)
	}
	s.raw.SetSyncHook(nil)
	st = s.Stats()
	if st.Syncs != 2 || st.LastRawID != 2 || st.Logs.Requests != 2 || st.Logs.Records != 3 {
		t.Errorf("after the fsync: syncs %d last raw id %d requests %d records %d; want 2 2 2 3",
			st.Syncs, st.LastRawID, st.Logs.Requests, st.Logs.Records)
	}
	if ids := rawIDs(t, s); len(ids) != 2 {
		t.Errorf("a projector reads raw ids %v after the fsync, want [1 2]", ids)
	}
}

// A failed fsync fails its group and every later append, which is not written; the store
// closes cleanly, and reopened it takes appends again.
func TestSyncFailureIsFinal(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Append(ctx, signal.Logs, []byte("kept"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Failed(); err != nil {
		t.Fatalf("Failed before any fsync failed: %v", err)
	}
	fail := func() error { return syscall.EIO }
	s.raw.SetSyncHook(fail)
	if err := s.Append(ctx, signal.Logs, []byte("unsynced"), 1); !errors.Is(err, ErrSyncFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append with a failing fsync: got %v, want an EIO fsync failure", err)
	}
	s.raw.SetSyncHook(nil)
	if err := s.Failed(); !errors.Is(err, ErrSyncFailed) {
		t.Errorf("Failed after a failed fsync: %v, want ErrSyncFailed", err)
	}
	commits := s.Stats().Commits
	if err := s.Append(ctx, signal.Logs, []byte("after"), 1); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Append after a failed fsync: got %v, want the fsync failure again", err)
	}
	st := s.Stats()
	if st.Commits != commits || st.CommitErrors != 2 || st.Logs.Requests != 1 || st.LastRawID != 1 {
		t.Errorf("after the failure: commits %d (before %d), commit errors %d, requests %d, last raw id %d; want no new commit, 2, 1, 1",
			st.Commits, commits, st.CommitErrors, st.Logs.Requests, st.LastRawID)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close after a failed fsync: %v", err)
	}

	s = openTest(t, Config{Dir: dir, NoProjection: true})
	// The failed group was written before its fsync failed, so it may be there; the one
	// after was never written.
	if n := rawCount(t, s); n != 2 {
		t.Errorf("reopened: %d raw rows, want 2 (kept, and the group whose fsync failed)", n)
	}
	if err := s.Failed(); err != nil {
		t.Errorf("Failed after reopening: %v", err)
	}
	if err := s.Append(ctx, signal.Logs, []byte("reopened"), 1); err != nil {
		t.Fatalf("Append after reopening: %v", err)
	}
}

// SyncNormal and SyncOff have no syncer: a commit is answered at once.
func TestNoSyncerBelowFull(t *testing.T) {
	for _, mode := range []SyncMode{SyncNormal, SyncOff} {
		s := openTest(t, Config{Dir: t.TempDir(), Sync: mode, NoProjection: true})
		if s.syncer != nil {
			t.Errorf("%s: a durable waiter runs", mode)
		}
		if err := s.Append(context.Background(), signal.Traces, []byte("t"), 1); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Syncs != 0 || st.LastRawID != 1 || st.Traces.Requests != 1 {
			t.Errorf("%s: syncs %d last raw id %d requests %d; want 0 1 1", mode, st.Syncs, st.LastRawID, st.Traces.Requests)
		}
	}
}
