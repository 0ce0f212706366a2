package profile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestPercentile(t *testing.T) {
	var s SyscallStat
	// 90 calls in [1024, 2048) ns, 10 in [65536, 131072) ns.
	s.Hist[10], s.Hist[16] = 90, 10
	s.Count, s.MaxNs = 100, 100000
	tests := []struct {
		name   string
		q      float64
		lo, hi time.Duration
	}{
		{"p50 in the low bucket", 0.5, 1024, 2048},
		{"p90 at the top of the low bucket", 0.9, 2047, 2048},
		{"p99 in the high bucket", 0.99, 65536, 100000},
		{"p100 capped at max", 1, 100000, 100000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Percentile(tt.q); got < tt.lo || got > tt.hi {
				t.Errorf("Percentile(%v) = %v, want in [%v, %v]", tt.q, got, tt.lo, tt.hi)
			}
		})
	}
	if got := (SyscallStat{}).Percentile(0.5); got != 0 {
		t.Errorf("empty Percentile = %v, want 0", got)
	}
}

func TestAvgUsesCompletedCalls(t *testing.T) {
	// exit_group is counted at entry and never completes: no histogram.
	s := SyscallStat{Count: 3, TotalNs: 300}
	s.Hist[6] = 2
	if got := s.Avg(); got != 150 {
		t.Errorf("Avg = %v, want 150ns", got)
	}
}

func sampleReport() *SyscallReport {
	mk := func(nr int, name string, count, errs, total, max uint64, bucket int) SyscallStat {
		s := SyscallStat{Nr: nr, Name: name, Count: count, Errors: errs, TotalNs: total, MaxNs: max}
		s.Hist[bucket] = count
		return s
	}
	r := &SyscallReport{
		PID: 42, Command: []string{"tailer", "-mode", "inotify"}, Arch: "amd64", Attach: AttachTPBTF,
		Started: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Elapsed: 2 * time.Second, ExitCode: 0,
		Syscalls: []SyscallStat{
			mk(0, "read", 4000, 0, 4_000_000, 9_000, 9),
			mk(262, "newfstatat", 32000, 0, 30_000_000, 200_000, 9),
			mk(257, "openat", 10, 2, 50_000, 9_000, 12),
		},
	}
	sortSyscalls(r.Syscalls)
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestWriteTextGolden(t *testing.T) {
	tests := []struct {
		name string
		sort SortKey
		top  int
	}{
		{"syscalls_by_time", SortTime, 0},
		{"syscalls_by_count_top2", SortCount, 2},
		{"syscalls_by_errors", SortErrors, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sampleReport()
			r.Sort(tt.sort)
			var buf bytes.Buffer
			if err := r.WriteText(&buf, tt.top); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

func TestWriteTextCountOnly(t *testing.T) {
	r := sampleReport()
	r.NoLatency = true
	r.Sort(SortCount)
	var buf bytes.Buffer
	if err := r.WriteText(&buf, 2); err != nil {
		t.Fatal(err)
	}
	golden(t, "syscalls_count_only", buf.Bytes())
}

func TestWriteJSON(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "syscalls_json", buf.Bytes())
	var v struct {
		Schema        string `json:"schema"`
		TotalSyscalls uint64 `json:"total_syscalls"`
		Syscalls      []struct {
			Name  string   `json:"name"`
			Count uint64   `json:"count"`
			P50   int64    `json:"p50_ns"`
			Hist  []uint64 `json:"histogram_log2_ns"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != SyscallReportSchema || v.TotalSyscalls != r.Total() || len(v.Syscalls) != 3 {
		t.Fatalf("got schema %q total %d rows %d, want %q %d 3", v.Schema, v.TotalSyscalls, len(v.Syscalls), SyscallReportSchema, r.Total())
	}
	if s := v.Syscalls[0]; s.Name != "newfstatat" || s.Count != 32000 || len(s.Hist) != 10 || s.Hist[9] != 32000 {
		t.Errorf("first row = %+v, want newfstatat with 32000 calls in bucket 9", s)
	}
}

func TestParseSortKey(t *testing.T) {
	for _, s := range []string{"time", "count", "errors", "avg"} {
		if _, err := ParseSortKey(s); err != nil {
			t.Errorf("ParseSortKey(%q): %v", s, err)
		}
	}
	if _, err := ParseSortKey("name"); err == nil {
		t.Error("ParseSortKey(name) = nil error, want one")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  SyscallConfig
		ok   bool
	}{
		{"pid", SyscallConfig{Target: Target{PID: 1}}, true},
		{"command", SyscallConfig{Target: Target{Command: []string{"true"}}}, true},
		{"neither", SyscallConfig{}, false},
		{"both", SyscallConfig{Target: Target{PID: 1, Command: []string{"true"}}}, false},
		{"negative pid", SyscallConfig{Target: Target{PID: -5}}, false},
		{"negative duration", SyscallConfig{Target: Target{PID: 1, Duration: -time.Second}}, false},
		{"bad attach", SyscallConfig{Target: Target{PID: 1}, Attach: "kprobe"}, false},
		{"raw_tp", SyscallConfig{Target: Target{PID: 1}, Attach: AttachRawTP}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
	if err := (CPUConfig{Target: Target{PID: 1}, Freq: MaxFreq + 1}).Validate(); err == nil {
		t.Error("CPUConfig with too high a frequency validated")
	}
}

func TestProfileFromReport(t *testing.T) {
	m := &MappingInfo{PID: 42, Start: 0x400000, End: 0x500000, Path: "/bin/tailer"}
	r := sampleReport()
	r.Stacks = []StackCount{
		{PID: 42, Syscall: "newfstatat", Count: 30, TotalNs: 3000, Frames: []Frame{
			{Addr: 0x401000, Function: "syscall.fstatat", Mapping: m},
			{Addr: 0x402000, Function: "main.(*tail).check", File: "main.go", Line: 88, Mapping: m},
		}},
		{PID: 42, Syscall: "read", Count: 5, TotalNs: 700, Frames: []Frame{
			{Addr: 0x401500, Mapping: m}, // unsymbolized
			{Addr: 0x402000, Function: "main.(*tail).check", File: "main.go", Line: 88, Mapping: m},
		}},
	}
	p, err := r.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 2 || len(p.Mapping) != 1 {
		t.Fatalf("got %d samples %d mappings, want 2 and 1", len(p.Sample), len(p.Mapping))
	}
	leaf := p.Sample[0].Location[0].Line[0].Function.Name
	if leaf != SyscallFramePrefix+"newfstatat" {
		t.Errorf("leaf frame = %q, want the syscall pseudo-frame", leaf)
	}
	if got := p.Sample[1].Value; got[0] != 5 || got[1] != 700 {
		t.Errorf("values = %v, want [5 700]", got)
	}
	// The shared caller is one location.
	if p.Sample[0].Location[2] != p.Sample[1].Location[2] {
		t.Error("same address in the same mapping became two locations")
	}
}

func TestCPUTopFunctions(t *testing.T) {
	r := &CPUReport{PID: 1, Freq: 99, Elapsed: time.Second, Samples: []CPUSample{
		{PID: 1, TID: 1, Count: 7, Frames: []Frame{{Function: "main.hot"}, {Function: "main.main"}}},
		{PID: 1, TID: 1, Count: 3, Frames: []Frame{{Function: "do_syscall_64", Kernel: true}, {Function: "main.main"}}},
	}}
	top := r.TopFunctions()
	want := []FunctionCount{
		{Function: "main.hot", Flat: 7, Cum: 7},
		{Function: "[k] do_syscall_64", Flat: 3, Cum: 3},
		{Function: "main.main", Flat: 0, Cum: 10},
	}
	if diff := cmp.Diff(want, top); diff != "" {
		t.Errorf("TopFunctions mismatch (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf, 0); err != nil {
		t.Fatal(err)
	}
	golden(t, "cpu_text", buf.Bytes())
	p, err := r.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sample[0].Value[1]; got != 7*int64(time.Second/99) {
		t.Errorf("cpu nanoseconds = %d, want %d", got, 7*int64(time.Second/99))
	}
}
