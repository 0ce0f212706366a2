package pipeline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// tailerBin is the repository's tailer (scripts/tailer), built once for the
// end-to-end tests: a real agent in a real child process.
var tailerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pipeline-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tailerBin = filepath.Join(dir, "tailer")
	build := exec.Command("go", "build", "-o", tailerBin, "../../scripts/tailer")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tailer:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("database/sql.(*DB).connectionOpener")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
