package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestOpenRefusesRawDB: a data directory of an earlier build, with raw.db, is refused with an
// error that names the file and says what to do, and nothing is created in it.
func TestOpenRefusesRawDB(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RawFileName), []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Config{Dir: dir, Logger: quietLogger})
	if err == nil {
		s.Close(context.Background())
		t.Fatal("Open of a directory with raw.db succeeded, want an error")
	}
	for _, want := range []string{RawFileName, "new --data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("the refused directory holds %d entries, want raw.db alone", len(ents))
	}
}
