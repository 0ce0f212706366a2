package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/procfd"
)

// fakeProc lays out <root>/<pid>/fd/<n> for pid 5 with 4 entries.
func fakeProc(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "5", "fd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	code = exitcode.Report(&errOut, "fdcount", err)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	root := fakeProc(t)
	type exitCase struct {
		name       string
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		stdoutRows int    // lines on stdout, -1 to skip
	}
	tests := []exitCase{
		{"self", []string{self}, 0, "PID  ", "", 2},
		{"self twice and pid 1", []string{self, "1", self}, 0, "stat", "", 4},
		{"missing pid", []string{self, "2147483647"}, 1, self, "pid 2147483647: stat /proc/2147483647/fd: no such process", 2},
		{"no args", nil, 2, "", "give at least one PID", 0},
		{"bad pid", []string{"12x"}, 2, "", `invalid PID "12x"`, 0},
		{"negative pid", []string{"--", "-3"}, 2, "", `invalid PID "-3"`, 0},
		{"unknown flag", []string{"--nope"}, 2, "", "unknown flag", 0},
		{"bad method", []string{"--method", "fast", "1"}, 2, "", "invalid method", 0},
		{"top without all", []string{"--top", "3", "1"}, 2, "", "--top needs --all", 0},
		{"all and pids", []string{"--all", "1"}, 2, "", "not both", 0},
		{"bad watch", []string{"--watch", "soon", "1"}, 2, "", "invalid argument", 0},
		{"all top", []string{"--all", "--top", "2"}, 0, "METHOD", "", 3},
		{"fixture", []string{"--proc", root, "5"}, 0, "readdir", "", 2},
		{"fixture stat forced", []string{"--proc", root, "--method", "stat", "5"}, 1, "", "not a procfs mount", 1},
		{"missing proc dir", []string{"--proc", filepath.Join(root, "nope"), "5"}, 1, "", "statfs", 0},
		{"watch rounds", []string{"--watch", "1ms", "--rounds", "3", self}, 0, "round 3", "", 11},
		{"threads", []string{"--threads", self}, 0, "THREADS", "", 2},
		{"readdir", []string{"--method", "readdir", self}, 0, "readdir", "", 2},
		{"help", []string{"--help"}, 0, "Usage:", "", -1},
		{"workers", []string{"--workers", "2", "--method", "readdir", self}, 0, "readdir", "", 2},
		{"bad workers", []string{"--workers", "99", self}, 2, "", "--workers 99", 0},
		{"fixture bpf forced", []string{"--proc", root, "--method", "bpf", "5"}, 1, "", "bpf fd counter unavailable", 1},
	}
	if os.Geteuid() == 0 {
		// The BPF counter needs root (or CAP_BPF and CAP_PERFMON).
		tests = append(tests, exitCase{"bpf", []string{"--method", "bpf", self}, 0, "bpf", "", 2})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.stderr)
			}
			if tt.stderr == "" && stderr != "" {
				t.Errorf("unexpected stderr %q", stderr)
			}
			if rows := strings.Count(stdout, "\n"); tt.stdoutRows >= 0 && rows != tt.stdoutRows {
				t.Errorf("stdout has %d lines, want %d:\n%s", rows, tt.stdoutRows, stdout)
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	code, stdout, stderr := run(t, "--json", strconv.Itoa(os.Getpid()))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	for _, k := range []string{"schema", "time", "proc_root", "procfs", "processes", "errors"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("key %q missing from %s", k, stdout)
		}
	}
	var snap procfd.Snapshot
	if err := json.Unmarshal([]byte(stdout), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Processes) != 1 || snap.Processes[0].PID != os.Getpid() || snap.Processes[0].FDs <= 0 {
		t.Errorf("processes = %+v, want this process with fds > 0", snap.Processes)
	}
}

// TestBinary runs the real binary: main's exit codes and stderr.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "fdcount")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		args []string
		code int
	}{
		{[]string{strconv.Itoa(os.Getpid())}, 0},
		{[]string{"2147483647"}, 1},
		{[]string{"--top", "x"}, 2},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("fdcount %v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, stderr.String())
		}
		if code != 0 && !strings.HasPrefix(stderr.String(), "fdcount: ") {
			t.Errorf("fdcount %v: stderr %q, want a reason", tt.args, stderr.String())
		}
	}
}
