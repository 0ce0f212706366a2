//go:build linux

package procfd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestEscapeComm(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "otelbench", "otelbench"},
		{"space", "kworker/0:1 x", "kworker/0:1 x"},
		{"unicode", "naïve", "naïve"},
		{"escape sequence", "\x1b[2J", `\x1b[2J`},
		{"newline", "a\nb", `a\nb`},
		{"tab", "a\tb", `a\tb`},
		{"backslash", `a\x1b`, `a\\x1b`},
		{"invalid utf-8", "a\xffb", `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := escapeComm(tt.in); got != tt.want {
				t.Errorf("escapeComm(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestTableEscapesRenamedProcess runs a child that renames itself to a
// terminal escape sequence and a newline followed by a fake row, then
// checks that the --all table shows it escaped on its own row.
func TestTableEscapesRenamedProcess(t *testing.T) {
	const evil = "\x1b[2J\n1 fake 9"
	// The shell writes its own comm (a builtin with a redirection runs in
	// the shell itself), then waits on sleep, so the renamed process stays.
	// Its own process group, so that the cleanup kills sleep too.
	cmd := exec.Command("/bin/sh", "-c", `printf '\033[2J\n1 fake 9' > /proc/$$/comm && sleep 30`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if strings.TrimSuffix(string(b), "\n") == evil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child comm = %q, want %q", b, evil)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, threads := range []bool{false, true} {
		var out bytes.Buffer
		if err := Run(context.Background(), Config{All: true, Threads: threads, Method: MethodStat, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if i := bytes.IndexByte(out.Bytes(), 0x1b); i >= 0 {
			t.Errorf("threads=%v: output holds a raw ESC at byte %d", threads, i)
		}
		var row string
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "1 fake") {
				t.Errorf("threads=%v: got an injected row %q", threads, line)
			}
			if f := strings.Fields(line); len(f) > 0 && f[0] == strconv.Itoa(pid) {
				row = line
			}
		}
		if want := `\x1b[2J\n1 fake 9`; !strings.Contains(row, want) {
			t.Errorf("threads=%v: got row %q, want it to hold %q", threads, row, want)
		}
	}
}

// TestAllThreadsSkipsExitedProcesses counts every process with --threads
// while short-lived children come and go: a process that exits between its
// count and the listing of its threads has exited since the listing, as
// one that exits before its count, and is left out rather than failing the
// run.
func TestAllThreadsSkipsExitedProcesses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // bounded: at most 5,000 children, one at a time
		defer wg.Done()
		for range 5000 {
			if ctx.Err() != nil {
				return
			}
			_ = exec.Command("/bin/true").Run()
		}
	}()
	defer wg.Wait()
	defer cancel()
	for round := range 20 {
		var stderr bytes.Buffer
		if err := Run(ctx, Config{All: true, Threads: true, Method: MethodStat, Stderr: &stderr}); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, stderr.String())
		}
	}
}
