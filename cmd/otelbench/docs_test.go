package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocSizes keeps the reference docs short enough to read: a reader
// finds a current figure in BENCHMARKS.md, an invariant in ARCHITECTURE.md
// and a decision in a design note without wading through a work log.
func TestDocSizes(t *testing.T) {
	const root = "../../docs"
	limits := []struct {
		glob  string
		total int // bytes, all files of the glob together
		each  int // bytes, each file (0: no limit)
	}{
		{"BENCHMARKS.md", 15 << 10, 0},
		{"ARCHITECTURE.md", 12 << 10, 0},
		{"benchmarks/*.md", 60 << 10, 0},
		{"design/*.md", 0, 6 << 10},
	}
	for _, l := range limits {
		files, err := filepath.Glob(filepath.Join(root, l.glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("docs/%s: no files (%v)", l.glob, err)
		}
		total := 0
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			total += int(fi.Size())
			if l.each > 0 && int(fi.Size()) > l.each {
				t.Errorf("%s is %d bytes, want at most %d", f, fi.Size(), l.each)
			}
		}
		if l.total > 0 && total > l.total {
			t.Errorf("docs/%s: %d bytes together, want at most %d", l.glob, total, l.total)
		}
	}
}

// TestNoWorkLogWords keeps code, comments, docs and scripts written for a
// reader who was not there: no numbered work sessions, no issue's targets.
func TestNoWorkLogWords(t *testing.T) {
	ordinals := "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth|twentieth|twenty-[a-z]+"
	pattern := regexp.MustCompile(`(?i)(` + ordinals + `) ` + `session|the ` + `issue\b`)
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := pattern.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: say what is true now, or name the commit or benchmark", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
