// Package goldentest holds a test's output to a golden file under testdata/, and rewrites the
// file from the output instead when the tests run with -update (go test ./... -update).
package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the tests' output")

// Update reports whether the tests run with -update: for a test that refreshes other files along
// with its goldens.
func Update() bool { return *update }

// Check compares got with testdata/name, and fails the test with a diff (-golden +got) where
// they differ. With -update it first writes got to the file.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden: %v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-golden +got):\n%s", path, diff)
	}
}
