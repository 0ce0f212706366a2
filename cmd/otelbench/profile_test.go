package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// runProfileCmd runs `otelbench profile` with args.
func runProfileCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return runCLI(t, append([]string{"profile"}, args...)...)
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
		{"negative latency sample", []string{"--latency-sample", "-1", "--pid", "1"}},
		{"latency sample with stacks", []string{"--latency-sample", "8", "--stacks", "--pid", "1"}},
		{"latency sample with no-latency", []string{"--latency-sample", "8", "--no-latency", "--pid", "1"}},
		{"cpu with latency sample", []string{"--cpu", "--latency-sample", "8", "--pid", "1"}},
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

// TestProfileLatencySample runs a fixed sampling period through to the
// text and JSON reports.
func TestProfileLatencySample(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to load BPF programs (CI runs as root)")
	}
	js := filepath.Join(t.TempDir(), "r.json")
	code, out := runProfileCmd(t, "--latency-sample", "4", "--json", js, "--", "sh", "-c", "ls / >/dev/null")
	if code != 0 {
		t.Fatalf("exit code = %d\n%s", code, out)
	}
	if !strings.Contains(out, "latency sampled 1/4 (fixed)") {
		t.Errorf("report does not say it sampled 1/4:\n%s", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		LatencySample int    `json:"latency_sample"`
		Auto          bool   `json:"latency_sample_auto"`
		Total         uint64 `json:"total_syscalls"`
		Timed         uint64 `json:"total_timed"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.LatencySample != 4 || v.Auto || v.Total == 0 || v.Timed > v.Total {
		t.Errorf("json = %+v, want latency_sample 4, not auto, timed <= total > 0", v)
	}
}
