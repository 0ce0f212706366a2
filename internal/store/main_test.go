package store

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(runCrashChild())
	}
	goleak.VerifyTestMain(m)
}

// openTest opens a store in a fresh temporary directory and closes it at cleanup.
func openTest(t testing.TB, cfg Config) *Store {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// holdWriteLock takes SQLite's write lock from a separate connection, as another process
// would, so the store's writer blocks in BEGIN IMMEDIATE until the returned func is called.
func holdWriteLock(t testing.TB, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatalf("begin immediate: %v", err)
	}
	done := false
	return func() {
		if done {
			return
		}
		done = true
		tx.Rollback()
		db.Close()
	}
}

// waitFor polls cond until it holds or the deadline passes (a liveness bound, not a timing
// assertion).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, 30*time.Second, what, cond)
}

// waitWithin is waitFor with its own deadline.
func waitWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// countRows returns SELECT count(*) FROM table via the read pool.
func countRows(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.ReadDB().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}
