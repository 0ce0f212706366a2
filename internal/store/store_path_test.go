package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenPathWithURICharacters opens a store in a directory whose name holds what a SQLite URI
// reads specially ('#', '?', '%'): the databases must be created there, and nowhere else.
func TestOpenPathWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run#2?x=1%41 b")
	for round := range 2 {
		s, err := Open(context.Background(), Config{Dir: dir, Sync: SyncOff, Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		appendLogs(t, s, makeLogs("svc", "uri", 5))
		waitProjected(t, s)
		if n := countRows(t, s, "logs"); n != 5*(round+1) {
			t.Errorf("round %d: %d logs, want %d", round, n, 5*(round+1))
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{FileName, RawDirName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not in the data directory: %v", name, err)
		}
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files beside the data directory: %q", names)
	}
}
