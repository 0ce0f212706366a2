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
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		var v []byte
		switch num {
		case 1:
			u, pos, err = i64Field(b, p, wt)
			row.Time = int64(u)
		case 11:
			u, pos, err = i64Field(b, p, wt)
			row.Observed = int64(u)
		case 2:
			u, pos, err = varintField(b, p, wt)
			row.Severity = int64(int32(u))
		case 3:
			v, pos, err = lenField(b, p, wt)
			row.SeverityText = w.str(v)
		case 5:
			if hasBody {
				return errWire // pdata merges the two
			}
			hasBody = true
			if v, pos, err = lenField(b, p, wt); err != nil {
				return err
			}
			var kind int32
			var str []byte
			w.val, kind, str, err = w.appendValue(w.val[:0], v, 0)
			switch kind {
			case 0:
			case 1:
				row.Body = w.str(str)
			default:
				row.Body = w.str(w.val)
			}
		case 6:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.attrs, v)
			}
		case 7:
			_, pos, err = varintField(b, p, wt)
		case 8:
			var f uint32
			f, pos, err = i32Field(b, p, wt)
			row.Flags = int64(f)
		case 9:
			tid, pos, err = idField(b, p, wt, 16)
		case 10:
			sid, pos, err = idField(b, p, wt, 8)
		case 12:
			v, pos, err = lenField(b, p, wt)
			row.Event = w.str(v)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
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
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		var v []byte
		switch num {
		case 1:
			tid, pos, err = idField(b, p, wt, 16)
		case 2:
			sid, pos, err = idField(b, p, wt, 8)
		case 3:
			v, pos, err = lenField(b, p, wt)
			row.TraceState = w.str(v)
		case 4:
			pid, pos, err = idField(b, p, wt, 8)
		case 5:
			v, pos, err = lenField(b, p, wt)
			row.Name = w.str(v)
		case 6:
			u, pos, err = varintField(b, p, wt)
			row.Kind = int64(int32(u))
		case 7:
			u, pos, err = i64Field(b, p, wt)
			row.Start = int64(u)
		case 8:
			u, pos, err = i64Field(b, p, wt)
			row.End = int64(u)
		case 9:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.attrs, v)
			}
		case 10:
			u, pos, err = varintField(b, p, wt)
			row.DropAttrs = int64(uint32(u))
		case 11:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.event(st, row.ID, v)
			}
		case 12:
			u, pos, err = varintField(b, p, wt)
			row.DropEv = int64(uint32(u))
		case 13:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.link(st, row.ID, v)
			}
		case 14:
			u, pos, err = varintField(b, p, wt)
			row.DropLink = int64(uint32(u))
		case 15:
			if hasStatus {
				return errWire // pdata merges the two
			}
			hasStatus = true
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.status(&row, v)
			}
		case 16:
			var f uint32
			f, pos, err = i32Field(b, p, wt)
			row.Flags = int64(f)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
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
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 2:
			var v []byte
			v, pos, err = lenField(b, p, wt)
			row.StatusMsg = w.str(v)
		case 3:
			var u uint64
			u, pos, err = varintField(b, p, wt)
			row.StatusCode = int64(int32(u))
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// event stages a Span.Event of span row spanRow.
func (w *wireStager) event(st *Stage, spanRow int64, b []byte) error {
	ev := EventRow{SpanRow: spanRow}
	w.sub = append(w.sub[:0], '{')
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		var v []byte
		switch num {
		case 1:
			u, pos, err = i64Field(b, p, wt)
			ev.Time = int64(u)
		case 2:
			v, pos, err = lenField(b, p, wt)
			ev.Name = w.str(v)
		case 3:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.sub, v)
			}
		case 4:
			u, pos, err = varintField(b, p, wt)
			ev.Dropped = int64(uint32(u))
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
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
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		var v []byte
		switch num {
		case 1:
			tid, pos, err = idField(b, p, wt, 16)
		case 2:
			sid, pos, err = idField(b, p, wt, 8)
		case 3:
			v, pos, err = lenField(b, p, wt)
			ln.TraceState = w.str(v)
		case 4:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.sub, v)
			}
		case 5:
			u, pos, err = varintField(b, p, wt)
			ln.Dropped = int64(uint32(u))
		case 6:
			var f uint32
			f, pos, err = i32Field(b, p, wt)
			ln.Flags = int64(f)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	ln.Attrs = w.attrsString(&w.sub)
	ln.TraceID, ln.SpanID = w.requiredIDs(tid, sid)
	st.Links = append(st.Links, ln)
	return nil
}
