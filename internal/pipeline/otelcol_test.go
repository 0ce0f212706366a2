package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/logwriter"
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

// TestOtelcolFilelog runs the Collector's filelog receiver and otlphttp
// exporter as the agent and expects every line, once.
func TestOtelcolFilelog(t *testing.T) {
	bin := otelcolWithFilelog(t)
	out := &syncBuffer{}
	rep, err := Run(context.Background(), Config{
		Writer:      logwriter.Config{Files: 2, Rate: 2000, Duration: 2 * time.Second},
		Agent:       []string{bin, "--config", "{config}"},
		AgentConfig: "testdata/otelcol-filelog.yaml", AgentOutput: out,
		Warmup: 3 * time.Second, Drain: 30 * time.Second,
	})
	if err != nil {
		t.Fatalf("run: %v (collector output: %s)", err, out)
	}
	tot := rep.Totals
	if tot.Written != 4000 || tot.Missing != 0 || tot.Duplicates != 0 || rep.Sink.Unparseable != 0 {
		t.Errorf("got written %d missing %d duplicates %d unparseable %d; want 4000, 0, 0, 0 (collector output: %s)",
			tot.Written, tot.Missing, tot.Duplicates, rep.Sink.Unparseable, out)
	}
	if rep.Agent.CPUPer1000Lines <= 0 || rep.Agent.PeakRSSBytes <= 0 {
		t.Errorf("agent figures %+v: want CPU and RSS", rep.Agent)
	}
}
