package project

import (
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/stage"
)

// slice is one projection slice as the projector stages and commits it: its staged rows (stage)
// and what the projector notes beside them of its raw rows.
type slice struct {
	stage.Stage
	failed []failedRow // the raw rows of the slice it could not stage (unprojectable.go)
	huge   *hugeRow    // a raw row staged a window at a time (window.go)
}

// reset empties the slice for the next one, whose rows take ids from nextLogID and nextSpanID.
func (sl *slice) reset(nextLogID, nextSpanID int64) {
	sl.Stage.Reset(nextLogID, nextSpanID)
	sl.failed, sl.huge = sl.failed[:0], nil
}

// stageRow decodes one raw row into st: from its bytes (wireStager), or with pdata where the
// wire path refuses the payload.
func (st *slice) stageRow(r *rawlog.Row) error {
	payload := r.Payload
	if !st.PdataOnly {
		m := st.Mark()
		if st.Wire.Stage(&st.Stage, r.Signal, r.ID, payload) == nil {
			return nil
		}
		st.Rollback(m)
		st.WireRefused++
	}
	if err := st.StagePdata(r.Signal, r.ID, payload); err != nil {
		return st.StageDeep(r.Signal, r.ID, payload, err)
	}
	return nil
}
