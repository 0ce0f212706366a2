package profile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
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

// traceSyscalls traces cfg's target and fails the test on an error. A minute bounds a run that
// would hang, far above what any of the tests' targets takes.
func traceSyscalls(t *testing.T, cfg SyscallConfig) *SyscallReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := TraceSyscalls(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
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

// callsThrough counts the calls of syscall whose stacks pass through function fn.
func callsThrough(rep *SyscallReport, syscall, fn string) uint64 {
	var n uint64
	for _, s := range rep.Stacks {
		if s.Syscall == syscall && hasFunction(s.Frames, fn) {
			n += s.Count
		}
	}
	return n
}

// stdinFstatProgram waits for a line on stdin, makes N fstat calls, prints
// "done" and waits for stdin to close: a target for PID mode.
const stdinFstatProgram = `package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	r := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := r.ReadString('\n'); err != nil {
		os.Exit(1)
	}
	var st syscall.Stat_t
	for i := 0; i < n; i++ {
		syscall.Fstat(0, &st)
	}
	fmt.Println("done")
	io.Copy(io.Discard, r)
}
`

// forkProgram makes N fstat calls and then runs itself as a child that
// makes M: fstat counts tell whether the child was followed.
const forkProgram = `package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func fstats(n int) {
	var st syscall.Stat_t
	for i := 0; i < n; i++ {
		syscall.Fstat(0, &st)
	}
}

func main() {
	if os.Args[1] == "child" {
		m, _ := strconv.Atoi(os.Args[2])
		fstats(m)
		return
	}
	n, _ := strconv.Atoi(os.Args[1])
	fstats(n)
	if err := exec.Command("/proc/self/exe", "child", os.Args[2]).Run(); err != nil {
		os.Exit(3)
	}
}
`

// threadsProgram makes N fstat calls on each of two locked OS threads.
const threadsProgram = `package main

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			<-start
			var st syscall.Stat_t
			for j := 0; j < n; j++ {
				syscall.Fstat(0, &st)
			}
		}()
	}
	close(start)
	wg.Wait()
}
`

// bpfFDs counts this process's open BPF objects (programs, maps, links) and
// perf events, to check that a trace frees everything it opened.
func bpfFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		switch target {
		case "anon_inode:bpf-prog", "anon_inode:bpf-map", "anon_inode:bpf_link", "anon_inode:[perf_event]":
			n++
		}
	}
	return n
}

// checkFreed fails the test if BPF objects opened after before remain.
func checkFreed(t *testing.T, before int) {
	t.Helper()
	if after := bpfFDs(t); after > before {
		t.Errorf("%d BPF/perf fds open after the trace, %d before: want everything freed", after, before)
	}
}

// errFstatProgram makes N fstat calls on /dev/null and E on a closed fd
// (each failing with EBADF), from argv.
const errFstatProgram = `package main

import (
	"os"
	"strconv"
	"syscall"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	e, _ := strconv.Atoi(os.Args[2])
	f, err := os.Open("/dev/null")
	if err != nil {
		panic(err)
	}
	fd := int(f.Fd())
	var st syscall.Stat_t
	for i := 0; i < n; i++ {
		if err := syscall.Fstat(fd, &st); err != nil {
			panic(err)
		}
	}
	for i := 0; i < e; i++ {
		if err := syscall.Fstat(-1, &st); err == nil {
			panic("fstat(-1) succeeded")
		}
	}
}
`
