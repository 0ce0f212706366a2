package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Unprojectable raw rows. A raw row was acknowledged, so it must never disappear unnoticed; but
// a row that no decoder of this build accepts (a damaged row, a payload ingest should have
// refused) must not stall projection either. The projector therefore passes it by and, in the
// transaction of the slice that passes it, copies it whole (id, signal, records, receive time
// and payload) into its database's unprojectable table and counts it in projected_totals; it logs
// it once, after that commit. The raw log deletes whole segments once they are projected
// (the store's pruning), and the copy is in the same transaction as the high-water mark that lets
// its segment go, so the row is kept, whatever the store's raw retention says, until its data
// retention deletes the data of its time.

// failedRow is a raw row the projector could not stage.
type failedRow struct {
	rawID, received, records int64
	sig                      signal.Signal
	err                      string
	payload                  []byte
}

// failed records that r could not be staged, in st for the slice's transaction, with a copy of
// its payload (the slice's rows are reused after it commits).
func (p *projector) failed(st *slice, r *rawlog.Row, err error) {
	st.failed = append(st.failed, failedRow{rawID: r.ID, received: r.Received, records: r.Records, sig: r.Signal,
		err: err.Error(), payload: append([]byte{}, r.Payload...)})
}

// isFailed reports whether the current slice passed raw row id by.
func (st *slice) isFailed(id int64) bool {
	for i := range st.failed {
		if st.failed[i].rawID == id {
			return true
		}
	}
	return false
}

// logFailed logs, once the slice that passed them committed, the raw rows it could not
// project, and counts them.
func (p *projector) logFailed() {
	for _, f := range p.stage.failed {
		p.d.Counters.Unprojectable.Add(1)
		p.d.Counters.UnprojectableRecords.Add(uint64(f.records))
		p.d.Logger.Error("store: raw row cannot be projected; kept in the unprojectable table and counted",
			"raw_id", f.rawID, "signal", f.sig, "records", f.records, "db", p.d.Name, "err", f.err)
	}
}

// sliceTotals are the statements that record a slice's totals and unprojectable rows, on the
// projector's connection (part of inserts).
type sliceTotals struct {
	addUnprojectable, addTotals *sqlitec.Stmt
}

func newSliceTotals(c *sqlitec.Conn, errs *[]error) *sliceTotals {
	t := &sliceTotals{}
	var err error
	t.addUnprojectable, err = c.Prepare(`INSERT OR IGNORE INTO unprojectable(raw_id, signal, records, received_unix_nano, error, payload)
		VALUES (?,?,?,?,?,?)`)
	*errs = append(*errs, err)
	t.addTotals, err = c.Prepare(`UPDATE projected_totals SET records = records + ?2,
		unprojectable_requests = unprojectable_requests + ?3, unprojectable_records = unprojectable_records + ?4
		WHERE signal = ?1`)
	*errs = append(*errs, err)
	return t
}

func (t *sliceTotals) close() {
	if t != nil {
		t.addUnprojectable.Close()
		t.addTotals.Close()
	}
}

// write records, in the slice's transaction, the slice's projected records and its
// unprojectable rows: the raw rows up to hwm in rows that filter takes.
func (t *sliceTotals) write(filter rawlog.Filter, rows []rawlog.Row, hwm int64, failed []failedRow) error {
	var records, badRows, badRecords [signal.Traces + 1]int64
	for _, r := range rows {
		if r.ID > hwm {
			break
		}
		if filter.Takes(r.Signal) && r.Signal <= signal.Traces {
			records[r.Signal] += r.Records
		}
	}
	for _, f := range failed {
		if _, err := t.addUnprojectable.Exec(f.rawID, int64(f.sig), f.records, f.received, f.err, f.payload); err != nil {
			return fmt.Errorf("record unprojectable raw row %d: %w", f.rawID, err)
		}
		if f.sig <= signal.Traces {
			records[f.sig] -= f.records
			badRows[f.sig]++
			badRecords[f.sig] += f.records
		}
	}
	for sig := range records {
		if records[sig] == 0 && badRows[sig] == 0 {
			continue
		}
		if _, err := t.addTotals.Exec(int64(sig), records[sig], badRows[sig], badRecords[sig]); err != nil {
			return fmt.Errorf("update projected totals: %w", err)
		}
	}
	return nil
}
