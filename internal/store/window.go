package store

import (
	"errors"
	"fmt"

	"github.com/otelbench/otelbench/internal/sqlitec"
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

// windowRecords is the records a window stages: ~12 MB of staged rows of empty log records.
const windowRecords = 1 << 16

// errWindowEnd stops the wire path at the end of its window (recordWindow.next).
var errWindowEnd = errors.New("stage: end of the record window")

// recordWindow selects the records [from, to) of a payload for the wire path.
type recordWindow struct {
	on       bool
	from, to int64
	n        int64 // records met so far
	cut      bool  // stopped at to: records follow
}

func (w *recordWindow) begin(from int64) {
	*w = recordWindow{on: true, from: from, to: from + windowRecords}
}

// take counts a record and reports whether it is in the window (always, when w is nil or
// off). Past the window it notes that records follow.
func (w *recordWindow) take() bool {
	if w == nil || !w.on {
		return true
	}
	i := w.n
	w.n++
	if i >= w.to {
		w.cut = true
	}
	return i >= w.from && i < w.to
}

// hugeRow is a raw row staged a window at a time: next is the first record not yet staged.
type hugeRow struct {
	row  *rawRow
	next int64
}

// stageFirst stages r into st, only its first window when it holds more than windowRecords
// records (and the wire path stages it), noting the rest in st.huge.
func (p *projector) stageFirst(st *stage, r *rawRow) error {
	st.huge = nil
	if r.records <= windowRecords || p.sh.noWindow.Load() == r.id {
		return p.stageRow(st, r)
	}
	st.wire.win.begin(0)
	err := p.stageRow(st, r)
	if err == nil && st.wire.win.cut {
		st.huge = &hugeRow{row: r, next: windowRecords}
	}
	st.wire.win = recordWindow{}
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
			p.sh.noWindow.Store(h.row.id) // the retry stages the row whole
		}
	}()
	payload, err := p.payload(h.row)
	if err != nil {
		return err
	}
	for more := true; more; h.next += windowRecords {
		for i, n := range st.pointCounts() {
			p.nextPoint[i] += n
		}
		st.reset(st.nextLogID, st.nextSpanID)
		st.wire.win.begin(h.next)
		err := st.wire.stage(st, h.row.sig, h.row.id, payload)
		more = st.wire.win.cut
		st.wire.win = recordWindow{}
		if err != nil {
			return fmt.Errorf("stage records %d+ of raw row %d: %w", h.next, h.row.id, err)
		}
		st.pack()
		if err := p.writeRows(); err != nil {
			return err
		}
	}
	return nil
}
