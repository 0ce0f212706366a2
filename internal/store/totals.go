package store

import (
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Durable totals. The counters in Stats start at zero with the process; the totals since the data
// directory was created survive restarts and crashes exactly as the records do. The raw log keeps
// what it stored (rawlog's totals.go: the segments' counts and pruned.json); each projected
// database's projected_totals (schema_common.sql) counts in each slice's transaction. Open reads
// them into the counters' base; Stats.Durable adds the process's counters to it. The write path
// pays nothing for them.

// SignalTotals counts one signal since the data directory was created.
type SignalTotals struct {
	// Requests, Records and Bytes count what the raw log stored; RecordsProjected the records the
	// projectors projected (unprojectable rows excluded: Stats.UnprojectableRecords).
	Requests, Records, Bytes, RecordsProjected uint64
}

// Totals are the durable totals of each signal.
type Totals struct {
	Logs, Metrics, Traces SignalTotals
}

// Signal returns the totals of sig (zero for an invalid signal).
func (t Totals) Signal(sig signal.Signal) SignalTotals {
	return signal.Pick(sig, t.Logs, t.Metrics, t.Traces)
}

// durable returns the totals since the data directory was created: raw, the raw log's, and the
// projected records read at Open plus what this process projected since.
func (c *counters) durable(raw [signal.Traces + 1]rawlog.Count) Totals {
	sig := func(i signal.Signal) SignalTotals {
		return SignalTotals{
			Requests:         raw[i].Requests,
			Records:          raw[i].Records,
			Bytes:            raw[i].Bytes,
			RecordsProjected: c.baseProjected[i] + c.projected[i].Load(),
		}
	}
	return Totals{Logs: sig(signal.Logs), Metrics: sig(signal.Metrics), Traces: sig(signal.Traces)}
}
