package profile

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/childtest"
)

func TestTraceSyscallsPIDMode(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "stdinfstat", stdinFstatProgram)
	const n = 777
	rep := traceReadyChild(t, exec.Command(bin, strconv.Itoa(n)), false)
	st, _ := rep.Syscall("fstat")
	if st.Count != n {
		t.Errorf("fstat count = %d, want %d", st.Count, n)
	}
	if rep.ExitCode != -1 {
		t.Errorf("exit code in PID mode = %d, want -1", rep.ExitCode)
	}
}

// traceReadyChild starts cmd (a stdinFstatProgram, possibly under a shell),
// waits for its "ready", traces its PID (with follow, its children too), lets
// it run its calls once the tracer is attached, and returns the report taken
// after it printed "done".
func traceReadyChild(t *testing.T, cmd *exec.Cmd, follow bool) *SyscallReport {
	t.Helper()
	stdin, stdout := childtest.Start(t, cmd)
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("child did not get ready: %q", lines.Text())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		rep *SyscallReport
		err error
	}
	done := make(chan result, 1)
	attached := make(chan struct{})
	go func() {
		rep, err := TraceSyscalls(ctx, SyscallConfig{Target: Target{PID: cmd.Process.Pid, FollowChildren: follow,
			Attached: func(int) { close(attached) }}})
		done <- result{rep, err}
	}()
	select {
	case <-attached:
	case res := <-done:
		t.Fatalf("TraceSyscalls returned before attaching: %v", res.err)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || lines.Text() != "done" {
		t.Fatalf("child did not finish: %q", lines.Text())
	}
	cancel()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.rep
}

func TestFollowChildren(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "forker", forkProgram)
	const parent, child = 300, 200
	tests := []struct {
		name   string
		follow bool
		want   uint64
	}{
		{"parent only", false, parent},
		{"with children", true, parent + child},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := traceSyscalls(t, SyscallConfig{Target: Target{
				Command: []string{bin, strconv.Itoa(parent), strconv.Itoa(child)}, FollowChildren: tt.follow}})
			st, _ := rep.Syscall("fstat")
			if st.Count != tt.want {
				t.Errorf("fstat count = %d, want %d", st.Count, tt.want)
			}
			// Go's os/exec probes pidfd support with a short-lived clone
			// first, so a followed parent shows two children.
			if got := len(rep.Children) > 0; got != tt.follow {
				t.Errorf("children = %v, want some: %v", rep.Children, tt.follow)
			}
			if rep.ExitCode != 0 {
				t.Errorf("exit code = %d, want 0", rep.ExitCode)
			}
		})
	}
}

func TestPerThread(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "threads", threadsProgram)
	const n = 1000
	rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, strconv.Itoa(n)}}, PerThread: true})
	var sum, total uint64
	var busy int
	for _, th := range rep.Threads {
		total += th.Count
		for _, s := range th.Syscalls {
			if s.Name == "fstat" {
				sum += s.Count
				if s.Count >= n {
					busy++
				}
			}
		}
		if th.Comm == "" || th.PID != rep.PID {
			t.Errorf("thread %+v: want comm and pid %d", th, rep.PID)
		}
	}
	if sum != 2*n || busy != 2 {
		t.Errorf("per-thread fstat: sum %d over %d busy threads, want %d over 2", sum, busy, 2*n)
	}
	if total != rep.Total() {
		t.Errorf("per-thread total %d, process total %d: want equal", total, rep.Total())
	}
}

func TestCommandExitCodeAndCancel(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "fstats", fstatProgram)
	rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, "10", "3"}}})
	if rep.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", rep.ExitCode)
	}

	// A command killed by a signal of its own reports 128+N, like a shell.
	rep = traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{"sh", "-c", "kill -TERM $$"}}})
	if rep.ExitCode != 128+15 {
		t.Errorf("exit code of a command killed by SIGTERM = %d, want 143", rep.ExitCode)
	}

	// Cancelling ends a long command (SIGINT) and still returns the report.
	before := bpfFDs(t)
	defer checkFreed(t, before)
	cctx, ccancel := context.WithCancel(context.Background())
	defer ccancel()
	var during int
	rep, err := TraceSyscalls(cctx, SyscallConfig{Target: Target{Command: []string{"sleep", "60"},
		Attached: func(int) { during = bpfFDs(t); ccancel() }}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != -1 {
		t.Errorf("exit code of the sleep we interrupted = %d, want -1", rep.ExitCode)
	}
	if during <= before {
		t.Errorf("%d BPF fds while tracing, %d before: the fd check sees nothing", during, before)
	}
	if err := exec.Command("kill", "-0", strconv.Itoa(rep.PID)).Run(); err == nil {
		t.Errorf("pid %d still exists after TraceSyscalls returned", rep.PID)
	}
}

func TestErrors(t *testing.T) {
	requireBPF(t)
	// A PID that existed a moment ago and is reaped now.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// A thread id that is not a process id.
	tid := os.Getpid()
	if tids, err := os.ReadDir("/proc/self/task"); err == nil {
		for _, e := range tids {
			if n, _ := strconv.Atoi(e.Name()); n != os.Getpid() {
				tid = n
				break
			}
		}
	}
	tests := []struct {
		name   string
		cfg    SyscallConfig
		is     error
		substr string
	}{
		{"gone pid", SyscallConfig{Target: Target{PID: gone.Process.Pid}}, ErrNoProcess, "did it exit"},
		{"missing command", SyscallConfig{Target: Target{Command: []string{"/nonexistent/otelbench-test"}}}, os.ErrNotExist, "start /nonexistent"},
		{"bad attach", SyscallConfig{Target: Target{PID: 1}, Attach: "kprobe"}, nil, "attach mode"},
	}
	if tid != os.Getpid() {
		tests = append(tests, struct {
			name   string
			cfg    SyscallConfig
			is     error
			substr string
		}{"thread id", SyscallConfig{Target: Target{PID: tid}}, nil, "is a thread of process"})
	}
	defer checkFreed(t, bpfFDs(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := TraceSyscalls(context.Background(), tt.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("error %q does not mention %q", err, tt.substr)
			}
		})
	}
}

// TestNotRootError re-runs this test binary as user nobody (setuid drops
// every capability) and checks that the error names the fix.
func TestNotRootError(t *testing.T) {
	if os.Getenv("PROFILE_TEST_AS_NOBODY") == "1" {
		if err := syscallSetuidNobody(); err != nil {
			t.Fatal(err)
		}
		_, err := TraceSyscalls(context.Background(), SyscallConfig{Target: Target{PID: os.Getpid(), Duration: time.Millisecond}})
		_, cerr := ProfileCPU(context.Background(), CPUConfig{Target: Target{PID: os.Getpid(), Duration: time.Millisecond}})
		for _, e := range []error{err, cerr} {
			if !errors.Is(e, ErrPermission) {
				t.Fatalf("error %v, want ErrPermission", e)
			}
		}
		os.Stdout.WriteString("ERR: " + err.Error() + "\n")
		return
	}
	requireBPF(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNotRootError$", "-test.v")
	cmd.Env = append(os.Environ(), "PROFILE_TEST_AS_NOBODY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{"CAP_BPF", "CAP_PERFMON", "root", "uid 65534"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error does not mention %q:\n%s", want, out)
		}
	}
}

// TestFollowExistingChildren traces a shell by PID whose child was forked
// before the trace began: --follow-children must pick it up from /proc.
func TestFollowExistingChildren(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "stdinfstat", stdinFstatProgram)
	const n = 555
	// "; true" keeps sh from exec-ing the program in its own process.
	rep := traceReadyChild(t, exec.Command("sh", "-c", bin+" "+strconv.Itoa(n)+"; true"), true)
	if st, _ := rep.Syscall("fstat"); st.Count != n {
		t.Errorf("fstat count = %d, want %d from the existing child", st.Count, n)
	}
	if len(rep.Children) != 1 {
		t.Errorf("children = %v, want the one child", rep.Children)
	}
}
