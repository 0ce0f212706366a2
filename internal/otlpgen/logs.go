package otlpgen

import (
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

var severities = [...]struct {
	num  plog.SeverityNumber
	text string
}{
	{plog.SeverityNumberDebug, "DEBUG"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberInfo, "INFO"},
	{plog.SeverityNumberWarn, "WARN"},
	{plog.SeverityNumberError, "ERROR"},
}

// logs returns one request's worth of log records for one service resource.
func (g *generator) logs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	g.putResource(rl.Resource().Attributes(), g.service())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("otelbench/otlpgen")
	sl.Scope().SetVersion("1")
	recs := sl.LogRecords()
	recs.EnsureCapacity(g.cfg.Records)
	for i := range g.cfg.Records {
		r := recs.AppendEmpty()
		at := g.ts(time.Duration(i) * time.Microsecond)
		r.SetTimestamp(at)
		r.SetObservedTimestamp(at + 1000)
		sev := severities[g.rng.IntN(len(severities))]
		r.SetSeverityNumber(sev.num)
		r.SetSeverityText(sev.text)
		r.Body().SetStr(g.body())
		g.putAttrs(r.Attributes())
		if g.rng.IntN(4) == 0 { // a quarter of logs belong to a trace
			r.SetTraceID(g.traceID())
			r.SetSpanID(g.spanID())
		}
	}
	return ld
}
