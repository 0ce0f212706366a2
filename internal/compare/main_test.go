package compare

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/otelbench/otelbench/internal/racetest"
	"go.uber.org/goleak"
)

// binDir holds the otelbench binary the end-to-end tests run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "compare-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// buildOtelbench builds cmd/otelbench once per test binary, on first use, so
// that unit tests alone do not pay for it. With -race the child is built
// with -race too, reusing the archives the rest of `go test -race ./...`
// compiled.
var buildOtelbench = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "otelbench")
	args := []string{"build", "-o", bin}
	if racetest.Enabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "../../cmd/otelbench")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build otelbench: %v\n%s", err, out)
	}
	return bin, nil
})

// otelbench returns the path of the otelbench binary, building it first.
func otelbench(t *testing.T) string {
	t.Helper()
	bin, err := buildOtelbench()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
