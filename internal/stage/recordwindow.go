package stage

import "errors"

// windowRecords is the records a window stages: ~12 MB of staged rows of empty log records.
const WindowRecords = 1 << 16

// errWindowEnd stops the wire path at the end of its window (recordWindow.next).
var errWindowEnd = errors.New("stage: end of the record window")

// recordWindow selects the records [from, to) of a payload for the wire path.
type RecordWindow struct {
	on       bool
	from, to int64
	n        int64 // records met so far
	Cut      bool  // stopped at to: records follow
}

func (w *RecordWindow) Begin(from int64) {
	*w = RecordWindow{on: true, from: from, to: from + WindowRecords}
}

// take counts a record and reports whether it is in the window (always, when w is nil or
// off). Past the window it notes that records follow.
func (w *RecordWindow) take() bool {
	if w == nil || !w.on {
		return true
	}
	i := w.n
	w.n++
	if i >= w.to {
		w.Cut = true
	}
	return i >= w.from && i < w.to
}
