package profile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/validtest"
)

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

func TestAvg(t *testing.T) {
	tests := []struct {
		name string
		s    SyscallStat
		want time.Duration
	}{
		{"every call timed", SyscallStat{Count: 4, Timed: 4, TotalNs: 400}, 100},
		// TotalNs is already scaled to all calls counted.
		{"sampled", SyscallStat{Count: 64, Timed: 1, TotalNs: 6400}, 100},
		{"never timed (exit_group)", SyscallStat{Count: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Avg(); got != tt.want {
				t.Errorf("Avg = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFinishStatsScales(t *testing.T) {
	tests := []struct {
		name      string
		count     uint64
		weight    uint64
		weighted  uint64
		wantTotal uint64
	}{
		{"every call timed", 10, 10, 1000, 1000},
		// 3 calls of 100 ns timed in windows of 1/16 (weight 16 each):
		// mean 100 ns, scaled to the exact count of 480.
		{"sampled", 480, 48, 4800, 48000},
		{"never timed", 5, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := SyscallStat{Count: tt.count, TotalNs: tt.weighted, weight: tt.weight}
			finishStats(&st)
			if st.TotalNs != tt.wantTotal {
				t.Errorf("TotalNs = %d, want %d", st.TotalNs, tt.wantTotal)
			}
		})
	}
}

func sampleReport() *SyscallReport {
	mk := func(nr int, name string, count, errs, total, max uint64, bucket int) SyscallStat {
		s := SyscallStat{Nr: nr, Name: name, Count: count, Errors: errs, TotalNs: total, MaxNs: max, Timed: count}
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
			goldentest.Check(t, tt.name+".golden", buf.Bytes())
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
	goldentest.Check(t, "syscalls_count_only"+".golden", buf.Bytes())
}

// sampledReport is sampleReport as a latency-sampled trace: times from some
// calls, and an exit_group that is never timed.
func sampledReport() *SyscallReport {
	r := sampleReport()
	r.LatencySample, r.LatencyAuto = 64, true
	for i := range r.Syscalls {
		r.Syscalls[i].Timed = r.Syscalls[i].Count/50 + 1
	}
	r.Syscalls = append(r.Syscalls, SyscallStat{Nr: 231, Name: "exit_group", Count: 1})
	return r
}

func TestWriteTextSampled(t *testing.T) {
	r := sampledReport()
	var buf bytes.Buffer
	if err := r.WriteText(&buf, 0); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, "syscalls_sampled"+".golden", buf.Bytes())
	for _, want := range []string{"latency sampled 1/64 (auto", "counts and errors exact"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("text does not contain %q:\n%s", want, buf.Bytes())
		}
	}
	// A call never timed shows its count and no times.
	for _, line := range strings.Split(buf.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "exit_group" {
			if got := strings.Join(f, " "); got != "exit_group 1 0 0 - - - - - -" {
				t.Errorf("exit_group row = %q, want its count and no times", got)
			}
		}
	}
}

func TestWriteJSONSampled(t *testing.T) {
	r := sampledReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var v struct {
		LatencySample int    `json:"latency_sample"`
		Auto          bool   `json:"latency_sample_auto"`
		TotalTimed    uint64 `json:"total_timed"`
		TotalSyscalls uint64 `json:"total_syscalls"`
		Syscalls      []struct {
			Name  string `json:"name"`
			Count uint64 `json:"count"`
			Timed uint64 `json:"timed"`
		} `json:"syscalls"`
	}
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.LatencySample != 64 || !v.Auto || v.TotalTimed != r.Timed() || v.TotalTimed >= v.TotalSyscalls {
		t.Errorf("json sampling = %d auto %v, %d of %d timed; want 64, auto, %d timed of more", v.LatencySample, v.Auto, v.TotalTimed, v.TotalSyscalls, r.Timed())
	}
	for _, s := range v.Syscalls {
		if s.Name == "exit_group" && (s.Count != 1 || s.Timed != 0) {
			t.Errorf("exit_group = %+v, want 1 call, none timed", s)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, "syscalls_json"+".golden", buf.Bytes())
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
	validtest.Run(t, []validtest.Case[SyscallConfig]{
		{"pid", SyscallConfig{Target: Target{PID: 1}}, nil},
		{"command", SyscallConfig{Target: Target{Command: []string{"true"}}}, nil},
		{"neither", SyscallConfig{}, validtest.Invalid},
		{"both", SyscallConfig{Target: Target{PID: 1, Command: []string{"true"}}}, validtest.Invalid},
		{"negative pid", SyscallConfig{Target: Target{PID: -5}}, validtest.Invalid},
		{"negative duration", SyscallConfig{Target: Target{PID: 1, Duration: -time.Second}}, validtest.Invalid},
		{"bad attach", SyscallConfig{Target: Target{PID: 1}, Attach: "kprobe"}, validtest.Invalid},
		{"raw_tp", SyscallConfig{Target: Target{PID: 1}, Attach: AttachRawTP}, nil},
		{"latency sample", SyscallConfig{Target: Target{PID: 1}, LatencySample: 8}, nil},
		{"negative latency sample", SyscallConfig{Target: Target{PID: 1}, LatencySample: -1}, validtest.Invalid},
		{"latency sample too large", SyscallConfig{Target: Target{PID: 1}, LatencySample: MaxLatencySample + 1}, validtest.Invalid},
		{"latency sample with stacks", SyscallConfig{Target: Target{PID: 1}, LatencySample: 8, Stacks: true}, validtest.Invalid},
		{"every call with stacks", SyscallConfig{Target: Target{PID: 1}, LatencySample: 1, Stacks: true}, nil},
		{"latency sample without latency", SyscallConfig{Target: Target{PID: 1}, LatencySample: 8, NoLatency: true}, validtest.Invalid},
	})
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
	goldentest.Check(t, "cpu_text"+".golden", buf.Bytes())
	p, err := r.Profile()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sample[0].Value[1]; got != 7*int64(time.Second/99) {
		t.Errorf("cpu nanoseconds = %d, want %d", got, 7*int64(time.Second/99))
	}
}

func TestWriteTextWarnings(t *testing.T) {
	r := sampleReport()
	r.Warnings = []string{"latency sampling: attach sys_enter: boom: later calls counted but not timed"}
	var buf bytes.Buffer
	if err := r.WriteText(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\nwarning: latency sampling: attach sys_enter: boom") {
		t.Errorf("warning not printed:\n%s", buf.String())
	}
}
