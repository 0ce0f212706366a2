package store

import (
	"context"
	"errors"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/signal"
)

// Durable totals. The counters in Stats start at zero with the process; the totals since the data
// directory was created are kept in the databases, in the very transactions that change what
// they count, so they survive restarts and crashes exactly as the rows do: raw.db's totals table
// (raw.sql) counts the raw rows pruned, in the transaction that deletes them, and the rows raw
// still holds count themselves; each projected database's projected_totals (schema_common.sql)
// counts in each slice's transaction. Open reads them into the counters' base; Stats.Durable
// adds the process's counters to it. Counting at prune time rather than in every group commit
// spares the write path a page a commit (one more WAL frame, fsynced, where a commit of a few
// requests writes three or four).

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

// pruneTotalsSQL adds the raw rows with ids in [?1, ?2] to totals; pruneIn runs it in the
// transaction that deletes them.
const pruneTotalsSQL = `UPDATE totals SET
	requests = requests + (SELECT count(*) FROM raw WHERE signal = totals.signal AND id BETWEEN ?1 AND ?2),
	records = records + (SELECT COALESCE(sum(records), 0) FROM raw WHERE signal = totals.signal AND id BETWEEN ?1 AND ?2),
	bytes = bytes + (SELECT COALESCE(sum(length(payload)), 0) FROM raw WHERE signal = totals.signal AND id BETWEEN ?1 AND ?2)
	WHERE signal BETWEEN 1 AND 3`

// loadTotals reads into the counters' base raw.db's totals (the rows pruned) and the rows raw
// holds, whose sizes SQLite reads from the record headers.
func (s *Store) loadTotals(ctx context.Context) error {
	rows, err := s.writeDB.QueryContext(ctx, `SELECT signal, sum(requests), sum(records), sum(bytes) FROM (
		SELECT signal, requests, records, bytes FROM totals
		UNION ALL SELECT signal, count(*), sum(records), sum(length(payload)) FROM raw GROUP BY signal
	) WHERE signal BETWEEN 1 AND 3 GROUP BY signal`)
	if err != nil {
		return diskfull.Classify("read totals", err)
	}
	c := &s.stats
	for rows.Next() {
		var sig, requests, records, bytes int64
		if err := rows.Scan(&sig, &requests, &records, &bytes); err != nil {
			rows.Close()
			return diskfull.Classify("read totals", err)
		}
		c.baseRequests[sig], c.baseRecords[sig], c.baseBytes[sig] = uint64(requests), uint64(records), uint64(bytes)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return diskfull.Classify("read totals", err)
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
