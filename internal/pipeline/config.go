package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/logwriter"
)

// Defaults of Config.
const (
	DefaultSinkAddr = "127.0.0.1:0"
	DefaultDrain    = 30 * time.Second
	DefaultWarmup   = 2 * time.Second
	DefaultStopWait = 10 * time.Second
	// sampleEvery is how often the agent's RSS and descriptors are read.
	sampleEvery = 250 * time.Millisecond
)

// SinkMode says what receives the agent's output.
type SinkMode string

// Sink modes: count accounts only (measures the agent alone); serve runs
// the durable ingest server in-process (measures the whole pipeline).
const (
	SinkCount SinkMode = "count"
	SinkServe SinkMode = "serve"
)

// SLO is a latency objective: each set percentile, in milliseconds, must
// not be exceeded by the end-to-end latency over all streams.
type SLO struct {
	P50  float64 `json:"p50_ms,omitempty"`
	P99  float64 `json:"p99_ms,omitempty"`
	P999 float64 `json:"p999_ms,omitempty"`
}

// ParseSLO parses "p99=500ms,p50=100ms".
func ParseSLO(s string) (SLO, error) {
	var o SLO
	if s == "" {
		return o, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		d, err := time.ParseDuration(v)
		if !ok || err != nil || d <= 0 {
			return o, fmt.Errorf("slo %q: want pNN=DURATION[,...], e.g. p99=500ms", part)
		}
		ms := float64(d) / float64(time.Millisecond)
		switch k {
		case "p50":
			o.P50 = ms
		case "p99":
			o.P99 = ms
		case "p999", "p99.9":
			o.P999 = ms
		default:
			return o, fmt.Errorf("slo %q: percentile %q, want p50, p99 or p999", part, k)
		}
	}
	return o, nil
}

// Config configures a Run.
type Config struct {
	// Writer configures the log files; an empty Writer.Dir means a
	// temporary directory, removed afterwards.
	Writer logwriter.Config
	// Agent is the agent's command line, with placeholders.
	Agent []string
	// AgentPID attaches to a running agent instead (exclusive with Agent).
	AgentPID int
	// AgentConfig is a template file rendered with the placeholders into
	// {config}.
	AgentConfig string
	// AgentOutput receives the agent's stdout and stderr (nil: a file in
	// the work directory, whose tail is shown when the agent fails).
	AgentOutput io.Writer
	// Sink is the receiver mode (default count).
	Sink SinkMode
	// SinkAddr is the receiver's OTLP/HTTP listen address (default
	// 127.0.0.1:0).
	SinkAddr string
	// SinkGRPCAddr is the receiver's OTLP/gRPC listen address (default
	// 127.0.0.1:0); {grpc_endpoint} is what it listens on, as host:port.
	SinkGRPCAddr string
	// Warmup is the time the agent gets to start before lines are written.
	Warmup time.Duration
	// Drain is the longest wait, after the last line is written, for every
	// line to arrive; lines still absent then are missing.
	Drain time.Duration
	// StopWait is how long the agent has to exit after SIGTERM.
	StopWait time.Duration
	// MaxLoss is the number of missing lines tolerated.
	MaxLoss int64
	// SLO is the latency objective (zero: none).
	SLO SLO
	// Syscalls counts the agent's syscalls through BPF (needs root).
	Syscalls bool
	// Pprof, if set, writes a pprof profile of the agent's syscall stacks
	// to this path (implies Syscalls).
	Pprof string
	// Progress shows live progress on this writer (nil: none).
	Progress io.Writer
	// Logger logs the run's steps (nil: discard).
	Logger *slog.Logger
}

// ErrInvalidConfig is wrapped by every Validate error.
var ErrInvalidConfig = errors.New("invalid pipeline config")

func (c Config) withDefaults() Config {
	c.Sink = cmp.Or(c.Sink, SinkCount)
	c.SinkAddr = cmp.Or(c.SinkAddr, DefaultSinkAddr)
	c.SinkGRPCAddr = cmp.Or(c.SinkGRPCAddr, DefaultSinkAddr)
	c.Warmup = cmp.Or(c.Warmup, DefaultWarmup)
	c.Drain = cmp.Or(c.Drain, DefaultDrain)
	c.StopWait = cmp.Or(c.StopWait, DefaultStopWait)
	if c.Pprof != "" {
		c.Syscalls = true
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports a usage error in c.
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	w := c.Writer
	w.Dir = cmp.Or(w.Dir, "placeholder")
	if err := w.Validate(); err != nil {
		return err
	}
	switch {
	case len(c.Agent) > 0 && c.AgentPID != 0:
		return bad("give an agent command or --agent-pid, not both")
	case len(c.Agent) == 0 && c.AgentPID == 0:
		return bad("give the agent command after -- (or --agent-pid PID)")
	case c.AgentPID < 0:
		return bad("agent pid %d", c.AgentPID)
	case c.Sink != SinkCount && c.Sink != SinkServe:
		return bad("sink %q: want count or serve", c.Sink)
	case c.Warmup < 0 || c.Drain < 0 || c.StopWait < 0:
		return bad("negative warmup, drain or stop wait")
	case c.MaxLoss < 0:
		return bad("max loss %d: want 0 or more", c.MaxLoss)
	case c.AgentConfig != "" && c.AgentPID != 0:
		return bad("--agent-config renders a config for a command this run starts, not for --agent-pid")
	}
	return nil
}
