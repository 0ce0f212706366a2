package rawlog

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// readIDs returns the ids a projector's reader of l reads now.
func readIDs(t *testing.T, l *Log) []int64 {
	t.Helper()
	r := l.Reader(Filter{})
	defer r.Close()
	var rows []Row
	if err := r.Read(&rows, 0, Limits{Rows: 100, Records: 1 << 40, Bytes: 1 << 40}); err != nil {
		t.Fatalf("Read: %v", err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// A group is answered only after the fsync that follows its write, and until then no reader of
// the log, the projectors' included, sees it although it is written.
func TestSyncFullAnswersAfterFsync(t *testing.T) {
	l := openLog(t, Config{})
	ctx := context.Background()
	if err := l.Append(ctx, signal.Logs, []byte("first"), 1); err != nil {
		t.Fatal(err)
	}
	entered, held := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(held) })
	t.Cleanup(release) // before the log's Close, which a held fsync would block
	l.seg.SetSyncHook(func() error {
		close(entered)
		<-held
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- l.Append(ctx, signal.Logs, []byte("second"), 2) }()
	select {
	case <-entered: // the second group is written; its fsync waits
	case err := <-done:
		t.Fatalf("Append returned %v before its group's fsync began", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Append returned %v before its fsync", err)
	default:
	}
	// seglog's syncer may begin the fsync before Write returns to the writer, which counts the
	// commit just after.
	polltest.Until(t, "the second commit to be counted", func() bool { return l.Commits() == 2 })
	st := l.Stats()
	if n := st.Stored[signal.Logs]; st.Commits != 2 || st.Syncs != 1 || st.LastID != 1 || n.Requests != 1 || n.Records != 1 {
		t.Errorf("between write and fsync: commits %d syncs %d last id %d requests %d records %d; want 2 1 1 1 1",
			st.Commits, st.Syncs, st.LastID, n.Requests, n.Records)
	}
	if n := rowCount(t, l); n != 1 {
		t.Fatalf("readers see %d rows, want 1 (the second is written, not durable)", n)
	}
	if ids := readIDs(t, l); len(ids) != 1 || ids[0] != 1 {
		t.Errorf("a projector reads ids %v before the fsync, want [1]", ids)
	}

	release()
	if err := <-done; err != nil {
		t.Fatalf("Append after its fsync: %v", err)
	}
	l.seg.SetSyncHook(nil)
	st = l.Stats()
	if n := st.Stored[signal.Logs]; st.Syncs != 2 || st.LastID != 2 || n.Requests != 2 || n.Records != 3 {
		t.Errorf("after the fsync: syncs %d last id %d requests %d records %d; want 2 2 2 3",
			st.Syncs, st.LastID, n.Requests, n.Records)
	}
	if ids := readIDs(t, l); len(ids) != 2 {
		t.Errorf("a projector reads ids %v after the fsync, want [1 2]", ids)
	}
}

// A failed fsync fails its group and every later append, which is not written; the log closes
// cleanly, and reopened it takes appends again.
func TestSyncFailureIsFinal(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	ctx := context.Background()
	if err := l.Append(ctx, signal.Logs, []byte("kept"), 1); err != nil {
		t.Fatal(err)
	}
	if err := l.Failed(); err != nil {
		t.Fatalf("Failed before any fsync failed: %v", err)
	}
	l.seg.SetSyncHook(func() error { return syscall.EIO })
	if err := l.Append(ctx, signal.Logs, []byte("unsynced"), 1); !errors.Is(err, ErrSyncFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append with a failing fsync: got %v, want an EIO fsync failure", err)
	}
	l.seg.SetSyncHook(nil)
	if err := l.Failed(); !errors.Is(err, ErrSyncFailed) {
		t.Errorf("Failed after a failed fsync: %v, want ErrSyncFailed", err)
	}
	commits := l.Stats().Commits
	if err := l.Append(ctx, signal.Logs, []byte("after"), 1); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Append after a failed fsync: got %v, want the fsync failure again", err)
	}
	st := l.Stats()
	if st.Commits != commits || st.CommitErrors != 2 || st.Stored[signal.Logs].Requests != 1 || st.LastID != 1 {
		t.Errorf("after the failure: commits %d (before %d), commit errors %d, requests %d, last id %d; want no new commit, 2, 1, 1",
			st.Commits, commits, st.CommitErrors, st.Stored[signal.Logs].Requests, st.LastID)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close after a failed fsync: %v", err)
	}

	l = openLog(t, Config{Dir: dir})
	// The failed group was written before its fsync failed, so it may be there; the one
	// after was never written.
	if n := rowCount(t, l); n != 2 {
		t.Errorf("reopened: %d rows, want 2 (kept, and the group whose fsync failed)", n)
	}
	if err := l.Failed(); err != nil {
		t.Errorf("Failed after reopening: %v", err)
	}
	if err := l.Append(ctx, signal.Logs, []byte("reopened"), 1); err != nil {
		t.Fatalf("Append after reopening: %v", err)
	}
}

// SyncNormal and SyncOff have no waiter: a group is answered at once.
func TestNoSyncerBelowFull(t *testing.T) {
	for _, mode := range []seglog.SyncMode{seglog.SyncNormal, seglog.SyncOff} {
		l := openLog(t, Config{Sync: mode})
		if l.syncer != nil {
			t.Errorf("%s: a durable waiter runs", mode)
		}
		if err := l.Append(context.Background(), signal.Traces, []byte("t"), 1); err != nil {
			t.Fatal(err)
		}
		if st := l.Stats(); st.Syncs != 0 || st.LastID != 1 || st.Stored[signal.Traces].Requests != 1 {
			t.Errorf("%s: syncs %d last id %d requests %d; want 0 1 1", mode, st.Syncs, st.LastID, st.Stored[signal.Traces].Requests)
		}
	}
}
