package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/logwriter"
	"github.com/otelbench/otelbench/internal/syncbuf"
)

// otelcolWithFilelog returns the Collector built by scripts/build-otelcol.sh
// ($OTELBENCH_OTELCOL, default /tmp/otelbench-otelcol/otelcol), or skips
// when it is absent or lacks the filelog receiver.
func otelcolWithFilelog(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELBENCH_OTELCOL")
	if bin == "" {
		bin = "/tmp/otelbench-otelcol/otelcol"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Collector at %s (build one with scripts/build-otelcol.sh, or set OTELBENCH_OTELCOL)", bin)
	}
	out, err := exec.Command(bin, "components").Output()
	if err != nil || !bytes.Contains(out, []byte("file_log")) && !bytes.Contains(out, []byte("filelog")) {
		t.Skipf("%s has no filelog receiver (rebuild it with scripts/build-otelcol.sh): %v", bin, err)
	}
	return bin
}

// TestOtelcolFilelog runs the Collector's filelog receiver as the agent,
// shipping over OTLP/HTTP (otlphttp exporter) and over OTLP/gRPC (otlp
// exporter) to the sink in each mode, and expects every line, once.
func TestOtelcolFilelog(t *testing.T) {
	bin := otelcolWithFilelog(t)
	tests := []struct {
		name   string
		config string
		sink   SinkMode
	}{
		{"http count", "testdata/otelcol-filelog.yaml", SinkCount},
		{"grpc count", "testdata/otelcol-filelog-grpc.yaml", SinkCount},
		{"grpc serve", "testdata/otelcol-filelog-grpc.yaml", SinkServe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &syncbuf.Buffer{}
			rep, err := Run(context.Background(), Config{
				Writer:      logwriter.Config{Files: 2, Rate: 2000, Duration: 2 * time.Second},
				Agent:       []string{bin, "--config", "{config}"},
				AgentConfig: tt.config, AgentOutput: out, Sink: tt.sink,
				Warmup: 3 * time.Second, Drain: 30 * time.Second,
			})
			if err != nil {
				t.Fatalf("run: %v (collector output: %s)", err, out)
			}
			tot := rep.Totals
			if tot.Written != 4000 || tot.Missing != 0 || tot.Duplicates != 0 || rep.Sink.Unparseable != 0 || rep.Sink.Requests == 0 {
				t.Errorf("got written %d missing %d duplicates %d unparseable %d requests %d; want 4000, 0, 0, 0, >0 (collector output: %s)",
					tot.Written, tot.Missing, tot.Duplicates, rep.Sink.Unparseable, rep.Sink.Requests, out)
			}
			if rep.Agent.CPUPer1000Lines <= 0 || rep.Agent.PeakRSSBytes <= 0 {
				t.Errorf("agent figures %+v: want CPU and RSS", rep.Agent)
			}
		})
	}
}
