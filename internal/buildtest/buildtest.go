// Package buildtest builds the Go programs that end-to-end tests run as real child processes
// (otelbench itself, the pipeline's tailer): each once per test binary, on first use, so that
// the unit tests alone do not pay for the build.
package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string // created by the first build, removed by Exit
	built = map[string]func() (string, error){}
)

// Exit removes the binaries built and exits with code: a TestMain ends with it, or passes it to
// goleak.VerifyTestMain as goleak.Cleanup(buildtest.Exit).
func Exit(code int) {
	mu.Lock()
	if dir != "" {
		os.RemoveAll(dir)
	}
	mu.Unlock()
	os.Exit(code)
}

// Go builds the Go package pkg (a directory relative to the test's package, such as
// "../../cmd/otelbench") with the go build flags args, once per test binary and flags, and
// returns the executable's path. It fails the test if the build fails. Its TestMain must end
// with Exit.
func Go(t testing.TB, pkg string, args ...string) string {
	t.Helper()
	key := strings.Join(append([]string{pkg}, args...), " ")
	mu.Lock()
	build, ok := built[key]
	if !ok {
		n := len(built)
		build = sync.OnceValues(func() (string, error) { return goBuild(n, pkg, args) })
		built[key] = build
	}
	mu.Unlock()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// goBuild builds the n-th program asked for into a directory of its own, under its package's
// name.
func goBuild(n int, pkg string, args []string) (string, error) {
	mu.Lock()
	if dir == "" {
		d, err := os.MkdirTemp("", "otelbench-test-bin-")
		if err != nil {
			mu.Unlock()
			return "", err
		}
		dir = d
	}
	out := filepath.Join(dir, strconv.Itoa(n), filepath.Base(pkg))
	mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, args...), pkg)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}
