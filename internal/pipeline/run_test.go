package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/logline"
	"github.com/otelbench/otelbench/internal/logwriter"
	"github.com/otelbench/otelbench/internal/syncbuf"
)

// tailerSummary is the summary line the tailer prints on exit.
type tailerSummary struct {
	Read, Shipped, Dropped, Duplicated, Failed int64
}

func parseSummary(t *testing.T, out string) tailerSummary {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "summary "); ok {
			var s tailerSummary
			if err := json.Unmarshal([]byte(rest), &s); err != nil {
				t.Fatalf("tailer summary %q: %v", rest, err)
			}
			return s
		}
	}
	t.Fatalf("no summary in the tailer's output:\n%s", out)
	return tailerSummary{}
}

// tailer is the command line of the repository's tailer (scripts/tailer, built on first use): a
// real agent in a real child process.
func tailer(t *testing.T, mode string, extra ...string) []string {
	t.Helper()
	return append([]string{buildtest.Go(t, "../../scripts/tailer"), "-mode", mode, "-dir", "{dir}", "-files", "{files}", "-endpoint", "{endpoint}",
		"-duration", "10m", "-flush", "50ms", "-interval", "50ms"}, extra...)
}

func skipNonLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the tailer follows files with inotify: Linux only")
	}
}

// TestTailerDeliversEveryLine runs the tailer in each mode as a real child
// process, against real files and the sink on loopback, and expects every
// line, once.
func TestTailerDeliversEveryLine(t *testing.T) {
	skipNonLinux(t)
	tests := []struct {
		mode   string
		sink   SinkMode
		format logline.Format
		layout logwriter.Layout
	}{
		{"inotify", SinkCount, logline.JSON, logwriter.LayoutFlat},
		{"fixed", SinkCount, logline.Logfmt, logwriter.LayoutFlat},
		{"poll", SinkServe, logline.Plain, logwriter.LayoutFlat},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			out := &syncbuf.Buffer{}
			rep, err := Run(context.Background(), Config{
				Writer: logwriter.Config{Files: 3, Rate: 3000, Duration: time.Second, Format: tt.format, Layout: tt.layout},
				Agent:  tailer(t, tt.mode), AgentOutput: out, Sink: tt.sink,
				Warmup: 200 * time.Millisecond, Drain: 20 * time.Second,
			})
			if err != nil {
				t.Fatalf("run: %v (agent output: %s)", err, out)
			}
			tot := rep.Totals
			if tot.Written != 3000 || tot.Missing != 0 || tot.Duplicates != 0 || tot.Received != 3000 || tot.OutOfOrder != 0 {
				t.Errorf("totals: got written %d received %d missing %d dup %d ooo %d; want 3000, 3000, 0, 0, 0",
					tot.Written, tot.Received, tot.Missing, tot.Duplicates, tot.OutOfOrder)
			}
			if !rep.Gates.Passed || rep.Check() != nil {
				t.Errorf("gates: %+v, want passed", rep.Gates)
			}
			if tot.Histogram == nil || tot.Histogram.Count != 3000 || tot.Latency.P50 <= 0 {
				t.Errorf("latency histogram %+v, p50 %v: want 3000 values", tot.Histogram, tot.Latency.P50)
			}
			a := rep.Agent
			if a.Error != "" || a.PeakRSSBytes <= 0 || a.FDsMax < 3 || a.ExitCode == nil || *a.ExitCode != 0 {
				t.Errorf("agent figures %+v: want no error, RSS, fds and exit 0", a)
			}
			if s := parseSummary(t, out.String()); s.Read != 3000 || s.Shipped != 3000 {
				t.Errorf("tailer summary %+v: want 3000 read and shipped", s)
			}
		})
	}
}

// TestDefectiveAgent checks that loss and duplicate figures are exact,
// against the tailer with known defects: every 97th line of a file dropped,
// every 250th shipped twice, while files rotate in each mode.
func TestDefectiveAgent(t *testing.T) {
	skipNonLinux(t)
	tests := []struct {
		name   string
		mode   string
		rotate logwriter.RotateMode
		layout logwriter.Layout
	}{
		{"fixed rename", "fixed", logwriter.RotateRename, logwriter.LayoutFlat},
		// poll reads every 50 ms, so a rename always finds unread lines in
		// the rotated file: they are read to its end before the new one.
		{"poll rename", "poll", logwriter.RotateRename, logwriter.LayoutFlat},
		{"inotify copytruncate", "inotify", logwriter.RotateCopyTruncate, logwriter.LayoutFlat},
		{"fixed copytruncate", "fixed", logwriter.RotateCopyTruncate, logwriter.LayoutFlat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &syncbuf.Buffer{}
			rep, err := Run(context.Background(), Config{
				Writer: logwriter.Config{Files: 2, Rate: 2000, Duration: 1500 * time.Millisecond,
					RotateEvery: 300 * time.Millisecond, RotateMode: tt.rotate, Keep: 10, Layout: tt.layout},
				Agent:       tailer(t, tt.mode, "-drop-every", "97", "-dup-every", "250"),
				AgentOutput: out, Warmup: 200 * time.Millisecond, Drain: 3 * time.Second,
				MaxLoss: 1 << 40,
			})
			if err != nil {
				t.Fatalf("run: %v (agent output: %s)", err, out)
			}
			s := parseSummary(t, out.String())
			tot := rep.Totals
			if rep.Writer.Rotations < 4 {
				t.Errorf("rotations = %d, want >= 4", rep.Writer.Rotations)
			}
			// Exact: what the agent never read or dropped is missing; what it
			// doubled is duplicated.
			if want := tot.Written - s.Read + s.Dropped; tot.Missing != want {
				t.Errorf("missing = %d, want written %d - read %d + dropped %d = %d", tot.Missing, tot.Written, s.Read, s.Dropped, want)
			}
			if tot.Duplicates != s.Duplicated {
				t.Errorf("duplicates = %d, want the %d the agent doubled", tot.Duplicates, s.Duplicated)
			}
			if s.Dropped == 0 || s.Duplicated == 0 {
				t.Errorf("agent summary %+v: want drops and duplicates", s)
			}
			if tt.rotate == logwriter.RotateRename {
				// Rename rotation loses nothing: every line was read, so the
				// defects alone explain the figures, per stream.
				for _, st := range rep.Streams {
					if want := st.Written / 97; st.Missing != want {
						t.Errorf("stream %d: missing %d, want %d / 97 = %d", st.Stream, st.Missing, st.Written, want)
					}
				}
			}
			if err := rep.Check(); err != nil {
				t.Errorf("check with max loss 2^40: %v", err)
			}
			rep.evaluate(0, SLO{})
			if err := rep.Check(); !errors.Is(err, ErrGateFailed) {
				t.Errorf("check with max loss 0: got %v, want ErrGateFailed", err)
			}
		})
	}
}

func TestAgentExitsEarly(t *testing.T) {
	_, err := Run(context.Background(), Config{
		Writer: logwriter.Config{Files: 1, Rate: 100, Duration: 5 * time.Second},
		Agent:  []string{"sh", "-c", "echo config is broken; exit 3"}, Warmup: 2 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "exited early") || !strings.Contains(err.Error(), "config is broken") {
		t.Fatalf("got %v, want an early exit error with the agent's output", err)
	}
}

// TestPlaceholders renders a config template and a command line.
func TestPlaceholders(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(tmpl, []byte("read: {dir}\nsend: {endpoint}/v1/logs\nfiles: {files}\nport: {port}\ngrpc: {grpc_endpoint}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &syncbuf.Buffer{}
	dir := t.TempDir()
	rep, err := Run(context.Background(), Config{
		Writer:      logwriter.Config{Dir: dir, Files: 2, Rate: 10, Duration: 100 * time.Millisecond},
		Agent:       []string{"sh", "-c", "cat {config}; echo argv {dir} {files}; exec sleep 60"},
		AgentConfig: tmpl, AgentOutput: out, Warmup: 300 * time.Millisecond, Drain: 10 * time.Millisecond,
		StopWait: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if _, _, err := net.SplitHostPort(rep.Config.GRPCEndpoint); err != nil || rep.Config.GRPCEndpoint == rep.Config.Endpoint {
		t.Errorf("grpc endpoint %q: want host:port of its own (%v)", rep.Config.GRPCEndpoint, err)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rep.Config.Endpoint, "http://"))
	for _, want := range []string{"read: " + dir + "\n", "send: " + rep.Config.Endpoint + "/v1/logs\n", "files: 2\n",
		"port: " + port + "\n", "grpc: " + rep.Config.GRPCEndpoint + "\n", "argv " + dir + " 2\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("agent output %q lacks %q", got, want)
		}
	}
	if rep.Totals.Missing != 1 || rep.Gates.Passed {
		t.Errorf("an agent that ships nothing: missing %d passed %v, want 1 missing and a failed gate", rep.Totals.Missing, rep.Gates.Passed)
	}
}

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in   string
		want SLO
		err  bool
	}{
		{"", SLO{}, false},
		{"p99=500ms", SLO{P99: 500}, false},
		{"p50=1s, p999=2s", SLO{P50: 1000, P999: 2000}, false},
		{"p95=1s", SLO{}, true},
		{"p99", SLO{}, true},
		{"p99=-1s", SLO{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSLO(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestEvaluate(t *testing.T) {
	r := &Report{}
	r.Totals.Missing = 3
	r.Totals.Latency.P99 = 120
	tests := []struct {
		name    string
		maxLoss int64
		slo     SLO
		fails   int
	}{
		{"both met", 3, SLO{P99: 200}, 0},
		{"loss", 2, SLO{}, 1},
		{"slo", 5, SLO{P99: 100}, 1},
		{"both", 0, SLO{P99: 100}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.evaluate(tt.maxLoss, tt.slo)
			if len(r.Gates.Failures) != tt.fails || r.Gates.Passed != (tt.fails == 0) {
				t.Errorf("gates %+v: want %d failures", r.Gates, tt.fails)
			}
		})
	}
}
