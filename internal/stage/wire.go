package stage

import (
	"errors"
	"unsafe"

	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// The stager's protobuf path.
//
// Decoding a payload with pdata builds every record, attribute and value as Go objects that
// the stage only reads once to make its rows: in a mixed catch-up that decoding was a fifth of
// the process's CPU and most of its allocations (docs/benchmarks/store.md). wireStager makes
// the same rows straight from the payload's bytes, read with otlpwire's walker, which holds
// pdata v1.71's acceptance rules for the stager and the ingest scanner alike: every wire type
// is checked, ids must be 0 or 8/16 bytes, the AnyValue family stops at its recursion limit,
// and fields the stage does not keep (exemplars, entity references, metric metadata, dropped
// counts) are still walked and checked.
//
// It only answers where it can prove pdata's answer: a payload it cannot decode, and the rare
// shapes whose pdata result depends on merging (a singular message field given twice), on the
// deprecated field-1000 scope lists, on string-table indexes or on a non-string service.name,
// make it refuse (errWire), and stageRow then rolls the stage back and decodes the payload
// with pdata, which owns every error. FuzzWireStageMatchesPdata holds the two paths to the same
// rows.

// errWire is the wire path's one error: the caller stages the payload with pdata instead.
var errWire = errors.New("stage: payload needs pdata")

// wireStager is the wire path's scratch memory, kept across payloads.
type wireStager struct {
	scopes  [][]byte // the scope entries (ScopeLogs/Spans/Metrics) of the current resource entry
	records [][]byte // the records of the current scope entry
	points  [][]byte // the data points of the current metric
	kvs     []wireKV // the attributes of a resource or scope, to sort
	attrs   []byte   // JSON of the current record's attributes
	sub     []byte   // JSON of the current span event's or link's attributes
	val     []byte   // JSON of a value
	scratch []byte   // JSON of a map's entries, before sorting

	// strs, when set (fill, catching up), holds the strings of the rows staged: their
	// attributes' JSON, bodies, ids and names. They are read only until the slice commits, and
	// the stage is staged again only after that; allocated one by one they were ~75% of the
	// objects a mixed catch-up allocated. What outlives the slice (the resource cache, scopes,
	// metric streams) is copied to the heap, as before.
	Strs *ByteArena
	u64  []uint64
	f64  []float64
	deep deepValues   // renders values nested past pdata's limit as strings, when set (deepvalue.go)
	Win  RecordWindow // stages only some records, when set (project/window.go)
}

// wireKV is one attribute of a map to sort: its key, and its "key":value JSON in scratch.
type wireKV struct {
	key        []byte
	start, end int
}

// bstr views b as a string without copying, for calls that do not keep the string.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Every message below is read by one loop over an otlpwire.Reader, which checks each field
// against the message's table (wire type, id size, whole packed runs) and skips unknown ones
// as pdata does; the loop keeps only row building, a case per field the stage keeps:
//
//	r := otlpwire.NewReader(&otlpwire.LogRecord, b)
//	for r.Next() {
//		switch r.Num {
//		case 1:
//			row.Time = int64(r.U)
//		}
//	}
//	if err := r.Err(); err != nil { ... }

// stage stages payload, a protobuf Export*ServiceRequest of sig from raw row rawID, into st.
// On an error st may hold part of it: the caller rolls st back.
func (w *wireStager) Stage(st *Stage, sig signal.Signal, rawID int64, payload []byte) error {
	req := otlpwire.Request(sig)
	if req == nil {
		return errWire // pdata's path names the unknown signal
	}
	r := otlpwire.NewReader(req, payload)
	for r.Next() {
		if r.Num != 1 {
			continue
		}
		if err := w.resourceEntry(st, sig, rawID, r.Msg(), r.Bytes()); err == errWindowEnd {
			return nil
		} else if err != nil {
			return err
		}
	}
	return r.Err()
}

// entryFields reads b, a Resource{Logs,Spans,Metrics} or Scope{Logs,Spans,Metrics} entry m: its
// head message (field 1: the Resource or the scope; has: it was present), the entries under it
// (field 2, into *list) and its schema URL (3). Field 1000 of a resource entry, the deprecated
// scope lists, sends the payload to pdata, which migrates them.
func entryFields(m *otlpwire.Message, b []byte, list *[][]byte, win *RecordWindow) (head []byte, has bool, schemaURL []byte, err error) {
	*list = (*list)[:0]
	resource := m == &otlpwire.ResourceLogs || m == &otlpwire.ResourceSpans || m == &otlpwire.ResourceMetrics
	r := otlpwire.NewReader(m, b)
	for r.Next() {
		switch {
		case r.Num == 1:
			if has {
				return nil, false, nil, errWire // pdata merges the two
			}
			head, has = r.Bytes(), true
		case r.Num == 2:
			if win.take() {
				*list = append(*list, r.Bytes())
			}
		case r.Num == 3:
			schemaURL = r.Bytes()
		case r.Num == 1000 && resource:
			return nil, false, nil, errWire
		}
	}
	return head, has, schemaURL, r.Err()
}

// resourceEntry stages a ResourceLogs, ResourceSpans or ResourceMetrics: its resource (field
// 1), its scope entries (2) and schema URL (3).
func (w *wireStager) resourceEntry(st *Stage, sig signal.Signal, rawID int64, m *otlpwire.Message, b []byte) error {
	res, hasRes, schemaURL, err := entryFields(m, b, &w.scopes, nil)
	if err != nil {
		return err
	}
	resIdx, err := w.resource(st, res, hasRes, string(schemaURL))
	if err != nil {
		return err
	}
	// The scope entries are staged in order; w.scopes is not touched below this level.
	scopeEntry := m.Field(2).Msg
	for _, e := range w.scopes {
		if err := w.scopeEntry(st, sig, rawID, resIdx, scopeEntry, e); err != nil {
			return err
		}
	}
	return nil
}

// resource stages a Resource given its bytes (has: the field was present), from the cache when
// those bytes were seen before, as resourceFor does for pdata's path.
func (w *wireStager) resource(st *Stage, b []byte, has bool, schemaURL string) (int, error) {
	if has {
		if hit, ok := st.ResCache.m[string(b)]; ok {
			st.ResCache.Hits++
			return st.stageCached(&hit, schemaURL), nil
		}
	}
	w.kvs = w.kvs[:0]
	w.scratch = w.scratch[:0]
	var service any
	r := otlpwire.NewReader(&otlpwire.Resource, b)
	for r.Next() {
		switch r.Num {
		case 1:
			key, str, kind, err := w.sortKV(r.Bytes())
			if err != nil {
				return 0, err
			}
			if service == nil && string(key) == "service.name" {
				switch kind {
				case 0:
					service = ""
				case 1:
					service = string(str)
				default:
					return 0, errWire // pdata's AsString renders it
				}
			}
		case 3: // an EntityRef, which the stage does not keep
			if _, err := otlpwire.Check(r.Msg(), r.Bytes(), 0); err != nil {
				return 0, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return 0, err
	}
	st.buf = w.sortedMap(st.buf[:0])
	idx := st.stageResourceJSON(st.buf, service, schemaURL)
	if has {
		e := &st.Resources[idx]
		st.ResCache.put(b, cached(e))
	}
	return idx, nil
}

// scopeEntry stages a ScopeLogs, ScopeSpans or ScopeMetrics of resource res: its scope (field
// 1), records (2) and schema URL (3).
func (w *wireStager) scopeEntry(st *Stage, sig signal.Signal, rawID int64, res int, m *otlpwire.Message, b []byte) error {
	var win *RecordWindow // the records of logs and spans; metrics count points (metric)
	if sig != signal.Metrics {
		win = &w.Win
	}
	scope, _, schemaURL, err := entryFields(m, b, &w.records, win)
	if err != nil {
		return err
	}
	scopeIdx, err := w.scope(st, scope, string(schemaURL))
	if err != nil {
		return err
	}
	for _, r := range w.records {
		switch sig {
		case signal.Logs:
			err = w.logRecord(st, rawID, res, scopeIdx, r)
		case signal.Traces:
			err = w.span(st, rawID, res, scopeIdx, r)
		case signal.Metrics:
			err = w.metric(st, rawID, res, scopeIdx, r)
		default:
			err = errWire
		}
		if err != nil {
			return err
		}
	}
	if w.Win.Cut {
		return errWindowEnd // the rest is past the window
	}
	return nil
}

// scope stages an InstrumentationScope given its bytes.
func (w *wireStager) scope(st *Stage, b []byte, schemaURL string) (int, error) {
	var name, version []byte
	w.kvs = w.kvs[:0]
	w.scratch = w.scratch[:0]
	r := otlpwire.NewReader(&otlpwire.Scope, b)
	for r.Next() {
		switch r.Num {
		case 1:
			name = r.Bytes()
		case 2:
			version = r.Bytes()
		case 3:
			if _, _, _, err := w.sortKV(r.Bytes()); err != nil {
				return 0, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return 0, err
	}
	st.buf = w.sortedMap(st.buf[:0])
	return st.stageScope(bstr(name), bstr(version), schemaURL, st.buf), nil
}
