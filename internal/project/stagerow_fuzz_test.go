package project

import (
	"encoding/json"
	"testing"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

// FuzzStageRow feeds arbitrary payloads to the projector's decoder: it must return an error or
// stage rows whose attribute JSON is valid, never panic. Raw rows are validated at ingest, so
// this guards against damaged rows and library surprises.
func FuzzStageRow(f *testing.F) {
	var lm = logsMarshaler
	seedLogs, _ := lm.MarshalLogs(makeLogs("svc", "seed", 2))
	f.Add(uint8(signal.Logs), seedLogs)
	f.Add(uint8(signal.Traces), benchTraces(3))
	f.Add(uint8(signal.Metrics), benchMetrics(4))
	f.Add(uint8(signal.Metrics), []byte{0x0a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, sig uint8, payload []byte) {
		p := &projector{}
		p.stage.reset(1, 1)
		r := rawlog.Row{ID: 1, Signal: signal.Signal(sig % 4), Records: 1, Payload: payload}
		if err := p.stage.stageRow(&r); err != nil {
			return
		}
		for _, l := range p.stage.Logs {
			if !json.Valid([]byte(l.Attrs)) {
				t.Fatalf("invalid attributes JSON %q", l.Attrs)
			}
		}
		for _, s := range p.stage.Spans {
			if !json.Valid([]byte(s.Attrs)) {
				t.Fatalf("invalid attributes JSON %q", s.Attrs)
			}
		}
		for _, res := range p.stage.Resources {
			if !json.Valid([]byte(res.Attrs)) {
				t.Fatalf("invalid resource JSON %q", res.Attrs)
			}
		}
	})
}
