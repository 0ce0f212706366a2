package stage

import (
	"github.com/otelbench/otelbench/internal/otlpwire"
)

// logRecord stages a LogRecord.
func (w *wireStager) logRecord(st *Stage, rawID int64, res, scope int, b []byte) error {
	row := LogRow{ID: st.NextLogID, RawID: rawID, Res: res, Scope: scope}
	var tid, sid []byte
	w.attrs = append(w.attrs[:0], '{')
	hasBody := false
	r := otlpwire.NewReader(&otlpwire.LogRecord, b)
	for r.Next() {
		switch r.Num {
		case 1:
			row.Time = int64(r.U)
		case 11:
			row.Observed = int64(r.U)
		case 2:
			row.Severity = int64(int32(r.U))
		case 3:
			row.SeverityText = w.str(r.Bytes())
		case 5:
			if hasBody {
				return errWire // pdata merges the two
			}
			hasBody = true
			var kind int32
			var str []byte
			var err error
			if w.val, kind, str, err = w.appendValue(w.val[:0], r.Bytes(), 0); err != nil {
				return err
			}
			switch kind {
			case 0:
			case 1:
				row.Body = w.str(str)
			default:
				row.Body = w.str(w.val)
			}
		case 6:
			if err := w.attr(&w.attrs, r.Bytes()); err != nil {
				return err
			}
		case 8:
			row.Flags = int64(uint32(r.U))
		case 9:
			tid = r.Bytes()
		case 10:
			sid = r.Bytes()
		case 12:
			row.Event = w.str(r.Bytes())
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	row.Attrs = w.attrsString(&w.attrs)
	row.TraceID, row.SpanID = w.hexID(tid), w.hexID(sid)
	st.Logs = append(st.Logs, row)
	st.NextLogID++
	return nil
}

// span stages a Span with its events and links.
func (w *wireStager) span(st *Stage, rawID int64, res, scope int, b []byte) error {
	row := SpanRow{ID: st.NextSpanID, RawID: rawID, Res: res, Scope: scope}
	var tid, sid, pid []byte
	w.attrs = append(w.attrs[:0], '{')
	hasStatus := false
	r := otlpwire.NewReader(&otlpwire.Span, b)
	for r.Next() {
		var err error
		switch r.Num {
		case 1:
			tid = r.Bytes()
		case 2:
			sid = r.Bytes()
		case 3:
			row.TraceState = w.str(r.Bytes())
		case 4:
			pid = r.Bytes()
		case 5:
			row.Name = w.str(r.Bytes())
		case 6:
			row.Kind = int64(int32(r.U))
		case 7:
			row.Start = int64(r.U)
		case 8:
			row.End = int64(r.U)
		case 9:
			err = w.attr(&w.attrs, r.Bytes())
		case 10:
			row.DropAttrs = int64(uint32(r.U))
		case 11:
			err = w.event(st, row.ID, r.Bytes())
		case 12:
			row.DropEv = int64(uint32(r.U))
		case 13:
			err = w.link(st, row.ID, r.Bytes())
		case 14:
			row.DropLink = int64(uint32(r.U))
		case 15:
			if hasStatus {
				return errWire // pdata merges the two
			}
			hasStatus = true
			err = w.status(&row, r.Bytes())
		case 16:
			row.Flags = int64(uint32(r.U))
		}
		if err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	row.Attrs = w.attrsString(&w.attrs)
	row.TraceID, row.SpanID = w.requiredIDs(tid, sid)
	row.Parent = w.hexID(pid)
	st.Spans = append(st.Spans, row)
	st.NextSpanID++
	return nil
}

// status reads a Span's Status into row.
func (w *wireStager) status(row *SpanRow, b []byte) error {
	r := otlpwire.NewReader(&otlpwire.Status, b)
	for r.Next() {
		switch r.Num {
		case 2:
			row.StatusMsg = w.str(r.Bytes())
		case 3:
			row.StatusCode = int64(int32(r.U))
		}
	}
	return r.Err()
}

// event stages a Span.Event of span row spanRow.
func (w *wireStager) event(st *Stage, spanRow int64, b []byte) error {
	ev := EventRow{SpanRow: spanRow}
	w.sub = append(w.sub[:0], '{')
	r := otlpwire.NewReader(&otlpwire.SpanEvent, b)
	for r.Next() {
		switch r.Num {
		case 1:
			ev.Time = int64(r.U)
		case 2:
			ev.Name = w.str(r.Bytes())
		case 3:
			if err := w.attr(&w.sub, r.Bytes()); err != nil {
				return err
			}
		case 4:
			ev.Dropped = int64(uint32(r.U))
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	ev.Attrs = w.attrsString(&w.sub)
	st.Events = append(st.Events, ev)
	return nil
}

// link stages a Span.Link of span row spanRow.
func (w *wireStager) link(st *Stage, spanRow int64, b []byte) error {
	ln := LinkRow{SpanRow: spanRow}
	var tid, sid []byte
	w.sub = append(w.sub[:0], '{')
	r := otlpwire.NewReader(&otlpwire.SpanLink, b)
	for r.Next() {
		switch r.Num {
		case 1:
			tid = r.Bytes()
		case 2:
			sid = r.Bytes()
		case 3:
			ln.TraceState = w.str(r.Bytes())
		case 4:
			if err := w.attr(&w.sub, r.Bytes()); err != nil {
				return err
			}
		case 5:
			ln.Dropped = int64(uint32(r.U))
		case 6:
			ln.Flags = int64(uint32(r.U))
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	ln.Attrs = w.attrsString(&w.sub)
	ln.TraceID, ln.SpanID = w.requiredIDs(tid, sid)
	st.Links = append(st.Links, ln)
	return nil
}
