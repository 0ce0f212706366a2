package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/sqlitec"
	"github.com/otelbench/otelbench/internal/stage"
)

// Record windows. A slice is bounded in rows, records and bytes, but its first raw row is taken
// whatever its size, and one request can hold millions of records: a 4 MB protobuf of 2 million
// empty log records took the server from 27 to 737 MB of peak RSS while its slice was staged
// (~180 bytes of staged row a record) and committed (every dirty page of the slice held in the
// page cache, cache_spill off). So the projector stages a raw row of more than windowRecords
// records in windows of windowRecords: the first when the slice is staged, the others in the
// slice's transaction, each written before the next is staged, with the page cache allowed to
// spill meanwhile. The slice still commits once, with its high-water mark, so crash safety is
// unchanged; only the staged rows and the cache are bounded. Each window's pass reads the
// payload's records before the window without decoding them (the earlier windows did) and stops
// at its end. A window the wire path cannot stage (a shape it leaves to pdata, past the first
// window) fails the slice; the retry stages that row whole, as before.

// hugeRow is a raw row staged a window at a time: next is the first record not yet staged.
type hugeRow struct {
	row  *rawlog.Row
	next int64
}

// stageFirst stages r into st, only its first window when it holds more than windowRecords
// records (and the wire path stages it), noting the rest in st.huge.
func (p *projector) stageFirst(st *slice, r *rawlog.Row) error {
	st.huge = nil
	if r.Records <= stage.WindowRecords || p.noWindow == r.ID {
		return st.stageRow(r)
	}
	st.Wire.Win.Begin(0)
	err := st.stageRow(r)
	if err == nil && st.Wire.Win.Cut {
		st.huge = &hugeRow{row: r, next: stage.WindowRecords}
	}
	st.Wire.Win = stage.RecordWindow{}
	return err
}

// windowStmts switch the page cache's spilling on and off around the transaction of a slice with
// a huge row (commitStage): SQLite applies the setting only outside a transaction.
type windowStmts struct{ spillOn, spillOff *sqlitec.Stmt }

// spill lets the projector's page cache spill dirty pages mid-transaction, or not.
func (w *windowStmts) spill(on bool) error {
	st := w.spillOff
	if on {
		st = w.spillOn
	}
	_, err := st.Exec()
	return err
}

func newWindowStmts(c *sqlitec.Conn, errs *[]error) *windowStmts {
	w := &windowStmts{}
	var err error
	w.spillOn, err = c.Prepare(`PRAGMA cache_spill = true`)
	*errs = append(*errs, err)
	w.spillOff, err = c.Prepare(`PRAGMA cache_spill = false`)
	*errs = append(*errs, err)
	return w
}

func (w *windowStmts) close() {
	if w != nil {
		w.spillOn.Close()
		w.spillOff.Close()
	}
}

// writeWindows stages and writes, in the slice's transaction, the windows of the huge row the
// stage holds the first window of (writeRows wrote it). It leaves in p.stage the last window,
// whose ids and point counts the caller moves past once the slice commits.
func (p *projector) writeWindows() (err error) {
	st := &p.stage
	if st.huge == nil {
		return nil
	}
	h := *st.huge
	defer func() {
		if err != nil {
			p.noWindow = h.row.ID // the retry stages the row whole
		}
	}()
	payload := h.row.Payload
	for more := true; more; h.next += stage.WindowRecords {
		for i, n := range st.PointCounts() {
			p.nextPoint[i] += n
		}
		st.reset(st.NextLogID, st.NextSpanID)
		st.Wire.Win.Begin(h.next)
		err := st.Wire.Stage(&st.Stage, h.row.Signal, h.row.ID, payload)
		more = st.Wire.Win.Cut
		st.Wire.Win = stage.RecordWindow{}
		if err != nil {
			return fmt.Errorf("stage records %d+ of raw row %d: %w", h.next, h.row.ID, err)
		}
		st.Pack()
		if err := p.writeRows(); err != nil {
			return err
		}
	}
	return nil
}
