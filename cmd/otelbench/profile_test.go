package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func runProfileCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"profile"}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString("ERROR: " + err.Error())
	}
	return report(err), out.String()
}

func TestProfileUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no target", nil},
		{"pid and command", []string{"--pid", "1", "--", "true"}},
		{"bad sort", []string{"--sort", "name", "--pid", "1"}},
		{"bad attach", []string{"--attach", "kprobe", "--pid", "1"}},
		{"cpu with json", []string{"--cpu", "--json", "x", "--pid", "1"}},
		{"bad freq", []string{"--cpu", "--freq", "0", "--pid", "1", "--freq", "-3"}},
		{"negative top", []string{"--top", "-1", "--pid", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, out := runProfileCmd(t, tt.args...); code != 2 {
				t.Errorf("exit code = %d, want 2 (usage)\n%s", code, out)
			}
		})
	}
}

func TestProfileCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to load BPF programs (CI runs as root)")
	}
	dir := t.TempDir()
	js, pb := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.pb.gz")
	// sh -c 'exit 4' passes its status through; ls makes some syscalls.
	code, out := runProfileCmd(t, "--json", js, "--pprof", pb, "--top", "3", "--",
		"sh", "-c", "ls / >/dev/null; exit 4")
	if code != 4 {
		t.Errorf("exit code = %d, want the command's 4\n%s", code, out)
	}
	for _, want := range []string{"syscall", "calls", "p99 us", "% time", "more)", "wrote " + pb} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Schema   string `json:"schema"`
		ExitCode int    `json:"exit_code"`
		Total    uint64 `json:"total_syscalls"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != "otelbench.profile.syscalls/v1" || v.ExitCode != 4 || v.Total == 0 {
		t.Errorf("json = %+v, want schema, exit code 4, some syscalls", v)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) == 0 || p.SampleType[0].Type != "syscalls" {
		t.Errorf("profile has %d samples, sample type %v", len(p.Sample), p.SampleType[0])
	}
}
