package store

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/crashtest"
)

func TestMain(m *testing.M) {
	crashtest.RunChild(crashChildEnv, runCrashChild)
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

// writeBacklog opens a store on dir with projection off, runs fill to append to it, and closes
// it: the raw log holds what fill appended, the tables none of it, for the next Open to project.
func writeBacklog(t testing.TB, dir string, fill func(s *Store)) {
	t.Helper()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	fill(s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// holdWriteLock holds the writer before its next group write until the returned func is
// called (Store.HoldWriter), and releases it when the test ends.
func holdWriteLock(t testing.TB, s *Store) (release func()) {
	t.Helper()
	release = s.HoldWriter()
	t.Cleanup(release)
	return release
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
