package pipeline

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/logwriter"
	"github.com/otelbench/otelbench/internal/reportfile"
)

// Schema identifies the JSON report format; docs/pipeline.md documents it.
const Schema = "otelbench.pipeline/v1"

// Report is the result of a Run, marshalling to the "otelbench.pipeline/v1"
// JSON. Its histograms are HdrHistogram V2 encodings in the geometry of
// `load`'s reports (loadgen.Histogram), mergeable across runs and tools.
type Report struct {
	Schema          string       `json:"schema"`
	Started         time.Time    `json:"started"`
	DurationSeconds float64      `json:"duration_seconds"` // writing
	DrainSeconds    float64      `json:"drain_seconds"`    // waiting for the last lines after writing
	Interrupted     bool         `json:"interrupted"`
	Config          ReportConfig `json:"config"`
	Writer          WriterStats  `json:"writer"`
	Sink            SinkStats    `json:"sink"`
	// Totals and Streams account for every line: see linesink.StreamStats.
	Totals  linesink.StreamStats   `json:"totals"`
	Streams []linesink.StreamStats `json:"streams"`
	Agent   AgentStats             `json:"agent"`
	Harness HarnessStats           `json:"harness"`
	Gates   Gates                  `json:"gates"`
}

// ReportConfig records what the run was asked to do.
type ReportConfig struct {
	Files         int      `json:"files"`
	Rate          float64  `json:"rate"`
	LineBytes     string   `json:"line_bytes"`
	Format        string   `json:"format"`
	Layout        string   `json:"layout"`
	RotateEvery   float64  `json:"rotate_every_seconds"`
	RotateMode    string   `json:"rotate_mode,omitempty"`
	Keep          int      `json:"keep,omitempty"`
	Fsync         string   `json:"fsync"`
	IntervalMs    float64  `json:"write_interval_ms"`
	Sink          string   `json:"sink"`
	Endpoint      string   `json:"endpoint"`
	GRPCEndpoint  string   `json:"grpc_endpoint,omitempty"`
	WarmupSeconds float64  `json:"warmup_seconds"`
	DrainSeconds  float64  `json:"drain_timeout_seconds"`
	Agent         []string `json:"agent,omitempty"` // rendered command line
	AgentConfig   string   `json:"agent_config,omitempty"`
}

// WriterStats is what the writer did.
type WriterStats struct {
	Lines          int64   `json:"lines"`
	Bytes          int64   `json:"bytes"`
	Writes         int64   `json:"writes"`
	LinesPerSecond float64 `json:"lines_per_second"`
	LateLines      int64   `json:"late_lines"`
	MaxLagMs       float64 `json:"max_lag_ms"`
	Rotations      int     `json:"rotations"` // per file
}

// SinkStats is what the sink saw beyond the line accounting.
type SinkStats struct {
	Requests    int64 `json:"requests"`
	Unparseable int64 `json:"unparseable"`
	Foreign     int64 `json:"foreign"`
}

// AgentStats is the agent's cost over the measured window (from the first
// line written to the end of the drain), read from /proc.
type AgentStats struct {
	PID              int     `json:"pid"`
	ExitCode         *int    `json:"exit_code,omitempty"`
	CPUUserSeconds   float64 `json:"cpu_user_seconds"`
	CPUSystemSeconds float64 `json:"cpu_system_seconds"`
	// CPUPer1000Lines is (user+system) seconds per 1,000 lines written.
	CPUPer1000Lines float64 `json:"cpu_seconds_per_1000_lines"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"` // VmHWM: the process's lifetime peak
	FDsMax          int     `json:"fds_max"`
	Error           string  `json:"error,omitempty"` // why the figures are missing
	// Syscalls is set with --syscalls: counts of the agent and its
	// children over the measured window.
	Syscalls *SyscallStats `json:"syscalls,omitempty"`
}

// SyscallStats are the agent's syscalls per line written.
type SyscallStats struct {
	Total   uint64           `json:"total"`
	PerLine float64          `json:"per_line"`
	ByName  []SyscallPerLine `json:"by_name"`
	Lost    uint64           `json:"lost,omitempty"` // events the BPF maps dropped
}

// SyscallPerLine is one syscall's count.
type SyscallPerLine struct {
	Name    string  `json:"name"`
	Count   uint64  `json:"count"`
	PerLine float64 `json:"per_line"`
}

// HarnessStats is this process's own cost (writer and sink, and the
// ingest server with --sink serve) over the measured window.
type HarnessStats struct {
	CPUSeconds float64 `json:"cpu_seconds"`
	// Cores is CPU seconds per second of the window: 0.25 is a quarter of
	// one core.
	Cores float64 `json:"cores"`
}

// Gates are the pass/fail rules and their outcome.
type Gates struct {
	MaxLoss  int64    `json:"max_loss"`
	SLO      SLO      `json:"slo"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures,omitempty"`
}

// ErrGateFailed is wrapped by Check's error.
var ErrGateFailed = errors.New("pipeline gate failed")

// evaluate applies the gates and fills r.Gates.
func (r *Report) evaluate(maxLoss int64, slo SLO) {
	g := Gates{MaxLoss: maxLoss, SLO: slo}
	if r.Totals.Missing > maxLoss {
		g.Failures = append(g.Failures, fmt.Sprintf("%d lines missing, at most %d allowed", r.Totals.Missing, maxLoss))
	}
	lat := r.Totals.Latency
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", lat.P50, slo.P50}, {"p99", lat.P99, slo.P99}, {"p99.9", lat.P999, slo.P999}} {
		if c.want > 0 && c.got > c.want {
			g.Failures = append(g.Failures, fmt.Sprintf("latency %s %.1f ms over the SLO of %.1f ms", c.name, c.got, c.want))
		}
	}
	g.Passed = len(g.Failures) == 0
	r.Gates = g
}

// Check returns an error wrapping ErrGateFailed when a gate failed.
func (r *Report) Check() error {
	if r.Gates.Passed {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrGateFailed, r.Gates.Failures)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return reportfile.Write(w, r) }

// ReadReport decodes a JSON report and checks its schema.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := reportfile.Read(rd, &r, func() string { return r.Schema }, Schema); err != nil {
		return nil, err
	}
	return &r, nil
}

func reportConfig(c Config, w logwriter.Config, sk *sink, agentArgv []string) ReportConfig {
	rc := ReportConfig{
		Files: w.Files, Rate: w.Rate, LineBytes: w.LineBytes.String(), Format: string(w.Format),
		Layout: string(w.Layout), RotateEvery: w.RotateEvery.Seconds(), Fsync: string(w.Fsync),
		IntervalMs: float64(w.Interval) / 1e6, Sink: string(c.Sink), Endpoint: sk.endpoint,
		GRPCEndpoint:  sk.grpcEndpoint,
		WarmupSeconds: c.Warmup.Seconds(), DrainSeconds: c.Drain.Seconds(),
		Agent: agentArgv, AgentConfig: c.AgentConfig,
	}
	if w.RotateEvery > 0 {
		rc.RotateMode, rc.Keep = string(w.RotateMode), w.Keep
	}
	return rc
}

func writerStats(res *logwriter.Result) WriterStats {
	ws := WriterStats{Lines: res.Lines, Bytes: res.Bytes, Writes: res.Writes, LateLines: res.LateLines,
		MaxLagMs: float64(res.MaxLag) / 1e6}
	if s := res.Elapsed.Seconds(); s > 0 {
		ws.LinesPerSecond = float64(res.Lines) / s
	}
	if len(res.Streams) > 0 {
		ws.Rotations = res.Streams[0].Rotations
	}
	return ws
}
