package pipeline

import (
	"bytes"
	"testing"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/loadgen"
)

func TestWriteTextGolden(t *testing.T) {
	exit := 0
	st := linesink.StreamStats{Stream: 0, Written: 1000, Received: 1001, Distinct: 990, Missing: 10, Duplicates: 1, OutOfOrder: 4,
		Latency: loadgen.Percentiles{P50: 51.5, P90: 90, P99: 109, P999: 132.6, Max: 137.3, Mean: 55}}
	tot := st
	tot.Stream = -1
	r := &Report{
		Schema: Schema, DurationSeconds: 10, DrainSeconds: 30,
		Config: ReportConfig{Files: 1, Rate: 100, LineBytes: "200", Format: "json", Layout: "flat", RotateEvery: 5,
			RotateMode: "rename", Keep: 3, Sink: "count"},
		Writer:  WriterStats{Lines: 1000, Bytes: 200000, Writes: 1000, LinesPerSecond: 100, MaxLagMs: 1.5},
		Sink:    SinkStats{Requests: 20},
		Totals:  tot,
		Streams: []linesink.StreamStats{st},
		Agent: AgentStats{PID: 42, ExitCode: &exit, CPUUserSeconds: 0.1, CPUSystemSeconds: 0.2, CPUPer1000Lines: 0.3,
			PeakRSSBytes: 18 << 20, FDsMax: 15,
			Syscalls: &SyscallStats{Total: 8000, PerLine: 8, ByName: []SyscallPerLine{{"newfstatat", 7000, 7}, {"read", 1000, 1}}}},
		Harness: HarnessStats{CPUSeconds: 0.5, Cores: 0.05},
	}
	r.evaluate(0, SLO{P99: 100})
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, "report.golden", buf.Bytes())
}
