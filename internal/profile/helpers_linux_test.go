package profile

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// requireBPF skips unless the test runs as root (CI does).
func requireBPF(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to load BPF programs (CI runs as root)")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("needs kernel BTF: %v", err)
	}
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
	buildDir   string
)

// buildGo compiles a one-file Go program once per test binary run and
// returns the path of the executable.
func buildGo(t *testing.T, name, src string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := buildCache[name]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "profile-test-bin")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	dir := filepath.Join(buildDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	buildCache[name] = bin
	return bin
}

// fstatProgram makes exactly N fstat calls (N from argv) in main.doFstats.
const fstatProgram = `package main

import (
	"os"
	"strconv"
	"syscall"
)

//go:noinline
func doFstats(fd, n int) {
	var st syscall.Stat_t
	for i := 0; i < n; i++ {
		if err := syscall.Fstat(fd, &st); err != nil {
			panic(err)
		}
	}
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	f, err := os.Open("/dev/null")
	if err != nil {
		panic(err)
	}
	doFstats(int(f.Fd()), n)
	if len(os.Args) > 2 {
		code, _ := strconv.Atoi(os.Args[2])
		os.Exit(code)
	}
}
`

// spinProgram burns CPU in main.spinHot for argv[1] milliseconds.
const spinProgram = `package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func spinHot(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

func main() {
	ms, _ := strconv.Atoi(os.Args[1])
	spinHot(time.Duration(ms) * time.Millisecond)
}
`

// hasFunction reports whether any frame of frames is named fn.
func hasFunction(frames []Frame, fn string) bool {
	for _, f := range frames {
		if f.Function == fn {
			return true
		}
	}
	return false
}
