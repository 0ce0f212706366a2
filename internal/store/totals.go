package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/otelbench/otelbench/internal/signal"
)

// Durable totals. The counters in Stats start at zero with the process; raw.db's totals table
// (raw.sql) and each projected database's projected_totals (schema_common.sql) count since the
// data directory was created, in the very transactions that store the rows they count, so they
// survive restarts and crashes exactly as the rows do. Open reads them into the counters' base;
// Stats.Durable adds the process's counters to it.

// SignalTotals counts one signal since the data directory was created.
type SignalTotals struct {
	// Requests, Records and Bytes count what raw.db committed; RecordsProjected the records the
	// projectors projected (unprojectable rows excluded: Stats.UnprojectableRecords).
	Requests, Records, Bytes, RecordsProjected uint64
}

// Totals are the durable totals of each signal.
type Totals struct {
	Logs, Metrics, Traces SignalTotals
}

// Signal returns the totals of sig (zero for an invalid signal).
func (t Totals) Signal(sig signal.Signal) SignalTotals { return pick(sig, t.Logs, t.Metrics, t.Traces) }

// addTotalsSQL adds a group commit's requests, records and bytes of each signal to totals, in
// one statement: ?1-?3 are logs', ?4-?6 metrics', ?7-?9 traces'.
const addTotalsSQL = `UPDATE totals SET
	requests = requests + CASE signal WHEN 1 THEN ?1 WHEN 2 THEN ?4 ELSE ?7 END,
	records = records + CASE signal WHEN 1 THEN ?2 WHEN 2 THEN ?5 ELSE ?8 END,
	bytes = bytes + CASE signal WHEN 1 THEN ?3 WHEN 2 THEN ?6 ELSE ?9 END
	WHERE signal BETWEEN 1 AND 3`

// prepareTotals prepares addTotalsSQL on writeDB, once, outside a transaction (database/sql
// cannot prepare on the single connection a transaction holds).
func (w *rawWriter) prepareTotals() error {
	if w.totals != nil {
		return nil
	}
	st, err := w.s.writeDB.Prepare(addTotalsSQL)
	if err != nil {
		return fmt.Errorf("prepare totals: %w", err)
	}
	w.totals = st
	return nil
}

// addTotals adds batch to raw.db's totals inside tx, the group commit's transaction.
func (w *rawWriter) addTotals(tx *sql.Tx, batch []*request) error {
	var sums [3 * signal.Count]any
	var n [3 * signal.Count]int64
	for _, r := range batch {
		i := 3 * r.sig.Index()
		n[i]++
		n[i+1] += int64(r.records)
		n[i+2] += int64(len(r.payload))
	}
	for i := range n {
		sums[i] = n[i]
	}
	if _, err := tx.Stmt(w.totals).Exec(sums[:]...); err != nil {
		return fmt.Errorf("update totals: %w", err)
	}
	return nil
}

// loadTotals reads raw.db's totals into the counters' base.
func (s *Store) loadTotals(ctx context.Context) error {
	rows, err := s.writeDB.QueryContext(ctx, `SELECT signal, requests, records, bytes FROM totals WHERE signal BETWEEN 1 AND 3`)
	if err != nil {
		return classify("read totals", err)
	}
	c := &s.stats
	for rows.Next() {
		var sig, requests, records, bytes int64
		if err := rows.Scan(&sig, &requests, &records, &bytes); err != nil {
			rows.Close()
			return classify("read totals", err)
		}
		c.baseRequests[sig], c.baseRecords[sig], c.baseBytes[sig] = uint64(requests), uint64(records), uint64(bytes)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return classify("read totals", err)
	}
	return nil
}

// durable returns the totals since the data directory was created: the base read at Open plus
// what this process counted since.
func (c *counters) durable() Totals {
	sig := func(i signal.Signal) SignalTotals {
		return SignalTotals{
			Requests:         c.baseRequests[i] + c.requests[i].Load(),
			Records:          c.baseRecords[i] + c.records[i].Load(),
			Bytes:            c.baseBytes[i] + c.bytes[i].Load(),
			RecordsProjected: c.baseProjected[i] + c.projected[i].Load(),
		}
	}
	return Totals{Logs: sig(signal.Logs), Metrics: sig(signal.Metrics), Traces: sig(signal.Traces)}
}
