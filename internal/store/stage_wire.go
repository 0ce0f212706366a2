package store

import (
	"encoding/base64"
	"errors"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// The stager's protobuf path.
//
// Decoding a payload with pdata builds every record, attribute and value as Go objects that
// the stage only reads once to make its rows: in a mixed catch-up that decoding was a fifth of
// the process's CPU and most of its allocations (docs/benchmarks/store.md, seventeenth
// session). wireStager makes the same rows straight from the payload's bytes, with pdata's
// acceptance rules (internal/otlpwire, the field tables of pdata v1.71's generated
// UnmarshalProto code): every wire type is checked, ids must be 0 or 8/16 bytes, the AnyValue
// family stops at its recursion limit, and fields the stage does not keep (exemplars, entity
// references, metric metadata, dropped counts) are still walked and checked.
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
	strs *byteArena
	u64  []uint64
	f64  []float64
	deep deepValues   // renders values nested past pdata's limit as strings, when set (deepvalue.go)
	win  recordWindow // stages only some records, when set (window.go)
}

// wireKV is one attribute of a map to sort: its key, and its "key":value JSON in scratch.
type wireKV struct {
	key        []byte
	start, end int
}

// bstr views b as a string without copying, for calls that do not keep the string.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Every message below is read by one loop of this shape, a case per known field, which
// checks the field's wire type (the *Field helpers) and skips unknown ones as pdata does:
//
//	for pos := 0; pos < len(b); {
//		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
//		...
//		switch num {
//		case 1:
//			v, pos, err = lenField(b, p, wt)
//		default:
//			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
//		}
//	}

// lenField reads a length-delimited field's value at pos, which must have wire type Len.
func lenField(b []byte, pos int, wt uint8) ([]byte, int, error) {
	if wt != otlpwire.Len {
		return nil, 0, errWire
	}
	return otlpwire.ConsumeBytes(b, pos)
}

// i64Field reads a fixed 64-bit field at pos.
func i64Field(b []byte, pos int, wt uint8) (uint64, int, error) {
	if wt != otlpwire.I64 {
		return 0, 0, errWire
	}
	return otlpwire.ConsumeFixed64(b, pos)
}

// i32Field reads a fixed 32-bit field at pos.
func i32Field(b []byte, pos int, wt uint8) (uint32, int, error) {
	if wt != otlpwire.I32 {
		return 0, 0, errWire
	}
	return otlpwire.ConsumeFixed32(b, pos)
}

// varintField reads a varint field at pos.
func varintField(b []byte, pos int, wt uint8) (uint64, int, error) {
	if wt != otlpwire.Varint {
		return 0, 0, errWire
	}
	return otlpwire.ConsumeVarint(b, pos)
}

// idField reads a trace id (size 16) or span id (8) at pos: empty or exactly size bytes.
func idField(b []byte, pos int, wt uint8, size int) ([]byte, int, error) {
	v, pos, err := lenField(b, pos, wt)
	if err == nil && len(v) != 0 && len(v) != size {
		err = errWire
	}
	return v, pos, err
}

// stage stages payload, a protobuf Export*ServiceRequest of sig from raw row rawID, into st.
// On an error st may hold part of it: the caller rolls st back.
func (w *wireStager) stage(st *stage, sig signal.Signal, rawID int64, payload []byte) error {
	switch sig {
	case signal.Logs, signal.Traces, signal.Metrics:
	default:
		return errWire // pdata's path names the unknown signal
	}
	for pos := 0; pos < len(payload); {
		num, wt, p, err := otlpwire.ConsumeTag(payload, pos)
		if err != nil {
			return err
		}
		if num != 1 {
			if pos, err = otlpwire.ConsumeUnknown(payload, p, wt); err != nil {
				return err
			}
			continue
		}
		var entry []byte
		if entry, pos, err = lenField(payload, p, wt); err != nil {
			return err
		}
		if err := w.resourceEntry(st, sig, rawID, entry); err == errWindowEnd {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// entryFields reads a Resource{Logs,Spans,Metrics} or Scope{Logs,Spans,Metrics} entry: its
// head message (field 1: the Resource or the scope; has: it was present), the entries under it
// (field 2, into *list) and its schema URL (3). resource: field 1000, the deprecated scope lists
// of a resource entry, sends the payload to pdata, which migrates them.
func entryFields(b []byte, list *[][]byte, resource bool, win *recordWindow) (head []byte, has bool, schemaURL []byte, err error) {
	*list = (*list)[:0]
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return nil, false, nil, err
		}
		switch {
		case num == 1:
			if has {
				return nil, false, nil, errWire // pdata merges the two
			}
			head, pos, err = lenField(b, p, wt)
			has = true
		case num == 2:
			var e []byte
			e, pos, err = lenField(b, p, wt)
			if win.take() {
				*list = append(*list, e)
			}
		case num == 3:
			schemaURL, pos, err = lenField(b, p, wt)
		case num == 1000 && resource:
			return nil, false, nil, errWire
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return nil, false, nil, err
		}
	}
	return head, has, schemaURL, nil
}

// resourceEntry stages a ResourceLogs, ResourceSpans or ResourceMetrics: its resource (field
// 1), its scope entries (2) and schema URL (3).
func (w *wireStager) resourceEntry(st *stage, sig signal.Signal, rawID int64, b []byte) error {
	res, hasRes, schemaURL, err := entryFields(b, &w.scopes, true, nil)
	if err != nil {
		return err
	}
	resIdx, err := w.resource(st, res, hasRes, string(schemaURL))
	if err != nil {
		return err
	}
	// The scope entries are staged in order; w.scopes is not touched below this level.
	for _, e := range w.scopes {
		if err := w.scopeEntry(st, sig, rawID, resIdx, e); err != nil {
			return err
		}
	}
	return nil
}

// resource stages a Resource given its bytes (has: the field was present), from the cache when
// those bytes were seen before, as resourceFor does for pdata's path.
func (w *wireStager) resource(st *stage, b []byte, has bool, schemaURL string) (int, error) {
	if has {
		if hit, ok := st.resCache.m[string(b)]; ok {
			st.resCache.hits++
			return st.stageCached(&hit, schemaURL), nil
		}
	}
	w.kvs = w.kvs[:0]
	w.scratch = w.scratch[:0]
	var service any
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return 0, err
		}
		switch num {
		case 1:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err != nil {
				return 0, err
			}
			key, str, kind, err := w.sortKV(kv)
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
		case 2:
			_, pos, err = varintField(b, p, wt)
		case 3:
			var ref []byte
			if ref, pos, err = lenField(b, p, wt); err == nil {
				err = checkEntityRef(ref)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return 0, err
		}
	}
	st.buf = w.sortedMap(st.buf[:0])
	idx := st.stageResourceJSON(st.buf, service, schemaURL)
	if has {
		e := &st.resources[idx]
		st.resCache.put(b, cached(e))
	}
	return idx, nil
}

// checkEntityRef checks a Resource's EntityRef, which the stage does not keep.
func checkEntityRef(b []byte) error {
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		if num >= 1 && num <= 4 {
			_, pos, err = lenField(b, p, wt)
		} else {
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sortKV renders KeyValue b into w.scratch and notes it in w.kvs for sortedMap, returning its
// key and, for a string value, the string (kind: the value's AnyValue field, 0 for none).
func (w *wireStager) sortKV(b []byte) (key, str []byte, kind int32, err error) {
	start := len(w.scratch)
	w.scratch, key, str, kind, err = w.appendKV(w.scratch, b, 0)
	w.kvs = append(w.kvs, wireKV{key: key, start: start, end: len(w.scratch)})
	return key, str, kind, err
}

// sortedMap appends the JSON object of w.kvs as appendJSONMapSorted renders a pcommon.Map:
// in the map's order when the keys are sorted, else by key, each key with the value of its
// first entry (Map.Get's).
func (w *wireStager) sortedMap(out []byte) []byte {
	out = append(out, '{')
	sorted := slices.IsSortedFunc(w.kvs, func(a, b wireKV) int { return compareBytes(a.key, b.key) })
	if !sorted {
		slices.SortStableFunc(w.kvs, func(a, b wireKV) int { return compareBytes(a.key, b.key) })
	}
	for i, kv := range w.kvs {
		if i > 0 {
			out = append(out, ',')
		}
		if !sorted {
			first := i
			for first > 0 && string(w.kvs[first-1].key) == string(kv.key) {
				first--
			}
			kv.start, kv.end = w.kvs[first].start, w.kvs[first].end
		}
		out = append(out, w.scratch[kv.start:kv.end]...)
	}
	return append(out, '}')
}

func compareBytes(a, b []byte) int {
	switch sa, sb := bstr(a), bstr(b); {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	}
	return 0
}

// appendKV appends KeyValue b as "key":value (a KeyValue at depth, as pdata counts it) and
// returns its key, and its value's kind and string as appendValue does.
func (w *wireStager) appendKV(out, b []byte, depth int) (_, key, str []byte, kind int32, err error) {
	if depth >= w.deep.limit() {
		return out, nil, nil, 0, errWire
	}
	depth++
	var value []byte
	hasValue := false
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return out, nil, nil, 0, err
		}
		switch num {
		case 1:
			key, pos, err = lenField(b, p, wt)
		case 2:
			if hasValue {
				return out, nil, nil, 0, errWire // pdata merges the two
			}
			value, pos, err = lenField(b, p, wt)
			hasValue = true
		case 3:
			return out, nil, nil, 0, errWire // a string-table key
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return out, nil, nil, 0, err
		}
	}
	out = appendJSONString(out, bstr(key))
	out = append(out, ':')
	if !hasValue {
		return append(out, "null"...), key, nil, 0, nil
	}
	out, kind, str, err = w.appendValue(out, value, depth)
	return out, key, str, kind, err
}

// appendValue appends AnyValue b (at depth) as appendJSONValue renders it and returns the field
// number of its value (0: empty; the last one given, as pdata keeps) and, for a string value,
// the string.
func (w *wireStager) appendValue(out, b []byte, depth int) (_ []byte, kind int32, str []byte, err error) {
	if depth >= w.deep.limit() {
		return out, 0, nil, errWire
	} else if w.deep.at(depth) {
		return w.appendDeep(out, b, depth)
	}
	depth++
	start := len(out)
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return out, 0, nil, err
		}
		if num >= 1 && num <= 8 {
			out, kind, str = out[:start], num, nil // a later value replaces an earlier one
		}
		var v []byte
		var u uint64
		switch num {
		case 1:
			if str, pos, err = lenField(b, p, wt); err == nil {
				out = appendJSONString(out, bstr(str))
			}
		case 2:
			if u, pos, err = varintField(b, p, wt); err == nil {
				out = strconv.AppendBool(out, u != 0)
			}
		case 3:
			if u, pos, err = varintField(b, p, wt); err == nil {
				out = strconv.AppendInt(out, int64(u), 10)
			}
		case 4:
			if u, pos, err = i64Field(b, p, wt); err == nil {
				out = appendJSONFloat(out, math.Float64frombits(u))
			}
		case 5:
			if v, pos, err = lenField(b, p, wt); err == nil {
				out, err = w.appendArray(out, v, depth)
			}
		case 6:
			if v, pos, err = lenField(b, p, wt); err == nil {
				out, err = w.appendKVList(out, v, depth)
			}
		case 7:
			if v, pos, err = lenField(b, p, wt); err == nil {
				out = append(out, '"')
				out = base64.StdEncoding.AppendEncode(out, v)
				out = append(out, '"')
			}
		case 8:
			return out, 0, nil, errWire // a string-table value
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return out, 0, nil, err
		}
	}
	if kind == 0 {
		out = append(out, "null"...)
	}
	return out, kind, str, nil
}

// appendArray appends ArrayValue b (at depth) as a JSON array; appendKVList appends
// KeyValueList b as a JSON object in its order. Both are a list of field-1 messages, at one
// depth more than the AnyValue holding them, as pdata counts.
func (w *wireStager) appendArray(out, b []byte, depth int) ([]byte, error) {
	return w.appendList(out, b, depth, '[', ']', false)
}

func (w *wireStager) appendKVList(out, b []byte, depth int) ([]byte, error) {
	return w.appendList(out, b, depth, '{', '}', true)
}

// appendList appends the field-1 entries of b between open and close: AnyValues, or KeyValues
// when kvs.
func (w *wireStager) appendList(out, b []byte, depth int, open, close byte, kvs bool) ([]byte, error) {
	if depth >= w.deep.limit() {
		return out, errWire
	}
	depth++
	out = append(out, open)
	first := true
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return out, err
		}
		if num != 1 {
			if pos, err = otlpwire.ConsumeUnknown(b, p, wt); err != nil {
				return out, err
			}
			continue
		}
		var v []byte
		if v, pos, err = lenField(b, p, wt); err != nil {
			return out, err
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		if kvs {
			out, _, _, _, err = w.appendKV(out, v, depth)
		} else {
			out, _, _, err = w.appendValue(out, v, depth)
		}
		if err != nil {
			return out, err
		}
	}
	return append(out, close), nil
}

// attr adds KeyValue b to the attributes being rendered in *dst (begun with "{").
func (w *wireStager) attr(dst *[]byte, b []byte) error {
	if len(*dst) > 1 {
		*dst = append(*dst, ',')
	}
	var err error
	*dst, _, _, _, err = w.appendKV(*dst, b, 0)
	return err
}

// attrsString ends the attributes rendered in *dst and returns them as st.attrs would.
func (w *wireStager) attrsString(dst *[]byte) string {
	if len(*dst) == 1 {
		return "{}"
	}
	*dst = append(*dst, '}')
	return w.str(*dst)
}

// str returns b as a string of a staged row: in strs when set, else a copy of its own.
func (w *wireStager) str(b []byte) string {
	if w.strs == nil || len(b) == 0 {
		return string(b)
	}
	buf := append(w.strs.alloc(len(b)), b...)
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// hexID is the package's hexID, its string in strs when set.
func (w *wireStager) hexID(id []byte) string {
	if w.strs == nil || allZero(id) {
		return hexID(id)
	}
	var buf [32]byte // a trace id's
	return w.str(appendHex(buf[:0], id))
}

// requiredIDs is the package's requiredIDs, the strings in strs when set.
func (w *wireStager) requiredIDs(traceID, spanID []byte) (string, string) {
	return zeroIDs(w.hexID(traceID), w.hexID(spanID))
}

// scopeEntry stages a ScopeLogs, ScopeSpans or ScopeMetrics of resource res: its scope (field
// 1), records (2) and schema URL (3).
func (w *wireStager) scopeEntry(st *stage, sig signal.Signal, rawID int64, res int, b []byte) error {
	var win *recordWindow // the records of logs and spans; metrics count points (metric)
	if sig != signal.Metrics {
		win = &w.win
	}
	scope, _, schemaURL, err := entryFields(b, &w.records, false, win)
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
	if w.win.cut {
		return errWindowEnd // the rest is past the window
	}
	return nil
}

// scope stages an InstrumentationScope given its bytes.
func (w *wireStager) scope(st *stage, b []byte, schemaURL string) (int, error) {
	var name, version []byte
	w.kvs = w.kvs[:0]
	w.scratch = w.scratch[:0]
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return 0, err
		}
		switch num {
		case 1:
			name, pos, err = lenField(b, p, wt)
		case 2:
			version, pos, err = lenField(b, p, wt)
		case 3:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err == nil {
				_, _, _, err = w.sortKV(kv)
			}
		case 4:
			_, pos, err = varintField(b, p, wt)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return 0, err
		}
	}
	st.buf = w.sortedMap(st.buf[:0])
	return st.stageScope(bstr(name), bstr(version), schemaURL, st.buf), nil
}

// logRecord stages a LogRecord.
func (w *wireStager) logRecord(st *stage, rawID int64, res, scope int, b []byte) error {
	row := logRow{id: st.nextLogID, rawID: rawID, res: res, scope: scope}
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
			row.time = int64(u)
		case 11:
			u, pos, err = i64Field(b, p, wt)
			row.observed = int64(u)
		case 2:
			u, pos, err = varintField(b, p, wt)
			row.severity = int64(int32(u))
		case 3:
			v, pos, err = lenField(b, p, wt)
			row.severityText = w.str(v)
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
				row.body = w.str(str)
			default:
				row.body = w.str(w.val)
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
			row.flags = int64(f)
		case 9:
			tid, pos, err = idField(b, p, wt, 16)
		case 10:
			sid, pos, err = idField(b, p, wt, 8)
		case 12:
			v, pos, err = lenField(b, p, wt)
			row.event = w.str(v)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	row.attrs = w.attrsString(&w.attrs)
	row.traceID, row.spanID = w.hexID(tid), w.hexID(sid)
	st.logs = append(st.logs, row)
	st.nextLogID++
	return nil
}

// span stages a Span with its events and links.
func (w *wireStager) span(st *stage, rawID int64, res, scope int, b []byte) error {
	row := spanRow{id: st.nextSpanID, rawID: rawID, res: res, scope: scope}
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
			row.traceState = w.str(v)
		case 4:
			pid, pos, err = idField(b, p, wt, 8)
		case 5:
			v, pos, err = lenField(b, p, wt)
			row.name = w.str(v)
		case 6:
			u, pos, err = varintField(b, p, wt)
			row.kind = int64(int32(u))
		case 7:
			u, pos, err = i64Field(b, p, wt)
			row.start = int64(u)
		case 8:
			u, pos, err = i64Field(b, p, wt)
			row.end = int64(u)
		case 9:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.attrs, v)
			}
		case 10:
			u, pos, err = varintField(b, p, wt)
			row.dropAttrs = int64(uint32(u))
		case 11:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.event(st, row.id, v)
			}
		case 12:
			u, pos, err = varintField(b, p, wt)
			row.dropEv = int64(uint32(u))
		case 13:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.link(st, row.id, v)
			}
		case 14:
			u, pos, err = varintField(b, p, wt)
			row.dropLink = int64(uint32(u))
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
			row.flags = int64(f)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	row.attrs = w.attrsString(&w.attrs)
	row.traceID, row.spanID = w.requiredIDs(tid, sid)
	row.parent = w.hexID(pid)
	st.spans = append(st.spans, row)
	st.nextSpanID++
	return nil
}

// status reads a Span's Status into row.
func (w *wireStager) status(row *spanRow, b []byte) error {
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 2:
			var v []byte
			v, pos, err = lenField(b, p, wt)
			row.statusMsg = w.str(v)
		case 3:
			var u uint64
			u, pos, err = varintField(b, p, wt)
			row.statusCode = int64(int32(u))
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
func (w *wireStager) event(st *stage, spanRow int64, b []byte) error {
	ev := eventRow{spanRow: spanRow}
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
			ev.time = int64(u)
		case 2:
			v, pos, err = lenField(b, p, wt)
			ev.name = w.str(v)
		case 3:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.sub, v)
			}
		case 4:
			u, pos, err = varintField(b, p, wt)
			ev.dropped = int64(uint32(u))
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	ev.attrs = w.attrsString(&w.sub)
	st.events = append(st.events, ev)
	return nil
}

// link stages a Span.Link of span row spanRow.
func (w *wireStager) link(st *stage, spanRow int64, b []byte) error {
	ln := linkRow{spanRow: spanRow}
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
			ln.traceState = w.str(v)
		case 4:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.attr(&w.sub, v)
			}
		case 5:
			u, pos, err = varintField(b, p, wt)
			ln.dropped = int64(uint32(u))
		case 6:
			var f uint32
			f, pos, err = i32Field(b, p, wt)
			ln.flags = int64(f)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	ln.attrs = w.attrsString(&w.sub)
	ln.traceID, ln.spanID = w.requiredIDs(tid, sid)
	st.links = append(st.links, ln)
	return nil
}

// Metric data fields (Metric's oneof), as stageMetric's type names.
var metricDataTypes = map[int32]string{
	5: metricGauge, 7: metricSum, 9: metricHistogram, 10: metricExpHistogram, 11: metricSummary,
}

// metric stages a Metric: its stream identity and its data points.
func (w *wireStager) metric(st *stage, rawID int64, res, scope int, b []byte) error {
	var name, desc, unit, data []byte
	var dataField int32
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 1:
			name, pos, err = lenField(b, p, wt)
		case 2:
			desc, pos, err = lenField(b, p, wt)
		case 3:
			unit, pos, err = lenField(b, p, wt)
		case 5, 7, 9, 10, 11:
			if dataField != 0 {
				return errWire // pdata keeps the last, or merges
			}
			dataField = num
			data, pos, err = lenField(b, p, wt)
		case 12:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err == nil {
				w.val, _, _, _, err = w.appendKV(w.val[:0], kv, 0)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	if dataField == 0 {
		return nil // no data: pdata's MetricTypeEmpty, which the stage skips
	}
	// The data message: its points (field 1), temporality (2) and, for a sum, monotonic (3).
	var temporality int64
	monotonic := false
	w.points = w.points[:0]
	for pos := 0; pos < len(data); {
		num, wt, p, err := otlpwire.ConsumeTag(data, pos)
		if err != nil {
			return err
		}
		var u uint64
		switch {
		case num == 1:
			var pt []byte
			pt, pos, err = lenField(data, p, wt)
			if w.win.take() {
				w.points = append(w.points, pt)
			}
		case num == 2 && dataField != 5 && dataField != 11:
			u, pos, err = varintField(data, p, wt)
			temporality = int64(int32(u))
		case num == 3 && dataField == 7:
			u, pos, err = varintField(data, p, wt)
			monotonic = u != 0
		default:
			pos, err = otlpwire.ConsumeUnknown(data, p, wt)
		}
		if err != nil {
			return err
		}
	}
	id := st.stageMetric(res, scope, bstr(name), bstr(desc), bstr(unit), metricDataTypes[dataField], temporality, monotonic)
	for _, pt := range w.points {
		var err error
		switch dataField {
		case 5, 7:
			err = w.numberPoint(st, id, rawID, pt)
		case 9:
			err = w.histPoint(st, id, rawID, pt)
		case 10:
			err = w.expHistPoint(st, id, rawID, pt)
		case 11:
			err = w.summaryPoint(st, id, rawID, pt)
		}
		if err != nil {
			return err
		}
	}
	if w.win.cut {
		return errWindowEnd // the rest is past the window
	}
	return nil
}

// pointField reads the fields every data point has: attributes (field attrs), start time (2),
// time (3) and flags (flags). ok false: num is none of them.
func (w *wireStager) pointField(h *pointHead, b []byte, num int32, wt uint8, p int, attrs, flags int32) (pos int, ok bool, err error) {
	var u uint64
	switch num {
	case attrs:
		var v []byte
		if v, pos, err = lenField(b, p, wt); err == nil {
			err = w.attr(&w.attrs, v)
		}
	case 2:
		u, pos, err = i64Field(b, p, wt)
		h.start = int64(u)
	case 3:
		u, pos, err = i64Field(b, p, wt)
		h.time = int64(u)
	case flags:
		u, pos, err = varintField(b, p, wt)
		h.flags = int64(uint32(u))
	default:
		return p, false, nil
	}
	return pos, true, err
}

func (w *wireStager) numberPoint(st *stage, metric int, rawID int64, b []byte) error {
	pt := numberPoint{pointHead: pointHead{metric: metric, rawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 7, 8); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.vint, pt.vdouble = nil, math.Float64frombits(u)
		case 6:
			u, pos, err = i64Field(b, p, wt)
			pt.vint, pt.vdouble = int64(u), nil
		case 5:
			var v []byte
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.checkExemplar(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.attrs = w.attrsString(&w.attrs)
	st.numbers = append(st.numbers, pt)
	return nil
}

// optI64 is an optional double's value for a row: the float, or nil (SQL NULL) when absent.
func optI64(has bool, u uint64) any {
	if !has {
		return nil
	}
	return math.Float64frombits(u)
}

func (w *wireStager) histPoint(st *stage, metric int, rawID int64, b []byte) error {
	pt := histPoint{pointHead: pointHead{metric: metric, rawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	w.u64, w.f64 = w.u64[:0], w.f64[:0]
	var sum, mn, mx uint64
	var hasSum, hasMin, hasMax bool
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 9, 10); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.count = int64(u)
		case 5:
			sum, pos, err = i64Field(b, p, wt)
			hasSum = true
		case 11:
			mn, pos, err = i64Field(b, p, wt)
			hasMin = true
		case 12:
			mx, pos, err = i64Field(b, p, wt)
			hasMax = true
		case 6:
			pos, err = fixed64s(&w.u64, b, p, wt, func(u uint64) uint64 { return u })
		case 7:
			pos, err = fixed64s(&w.f64, b, p, wt, math.Float64frombits)
		case 8:
			var v []byte
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.checkExemplar(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.attrs = w.attrsString(&w.attrs)
	pt.sum, pt.min, pt.max = optI64(hasSum, sum), optI64(hasMin, mn), optI64(hasMax, mx)
	pt.buckets = st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) })
	pt.bounds = st.json(func(b []byte) []byte { return appendJSONFloat64s(b, w.f64) })
	st.hists = append(st.hists, pt)
	return nil
}

// fixed64s reads a repeated fixed64 or double field at pos into *dst as pdata does: a packed
// run replaces what came before, a single value is appended.
func fixed64s[T any](dst *[]T, b []byte, pos int, wt uint8, conv func(uint64) T) (int, error) {
	switch wt {
	case otlpwire.Len:
		v, end, err := otlpwire.ConsumeBytes(b, pos)
		if err != nil {
			return 0, err
		}
		if len(v)%8 != 0 {
			return 0, errWire
		}
		*dst = (*dst)[:0]
		for i := 0; i < len(v); i += 8 {
			u, _, _ := otlpwire.ConsumeFixed64(v, i)
			*dst = append(*dst, conv(u))
		}
		return end, nil
	case otlpwire.I64:
		u, end, err := otlpwire.ConsumeFixed64(b, pos)
		if err != nil {
			return 0, err
		}
		*dst = append(*dst, conv(u))
		return end, nil
	}
	return 0, errWire
}

func (w *wireStager) expHistPoint(st *stage, metric int, rawID int64, b []byte) error {
	pt := expHistPoint{pointHead: pointHead{metric: metric, rawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	var sum, mn, mx uint64
	var hasSum, hasMin, hasMax, hasPos, hasNeg bool
	pt.posBuckets, pt.negBuckets = "[]", "[]"
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 1, 10); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		var v []byte
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.count = int64(u)
		case 5:
			sum, pos, err = i64Field(b, p, wt)
			hasSum = true
		case 12:
			mn, pos, err = i64Field(b, p, wt)
			hasMin = true
		case 13:
			mx, pos, err = i64Field(b, p, wt)
			hasMax = true
		case 6:
			u, pos, err = varintField(b, p, wt)
			pt.scale = int64(otlpwire.Zigzag32(u))
		case 7:
			u, pos, err = i64Field(b, p, wt)
			pt.zeroCount = int64(u)
		case 14:
			u, pos, err = i64Field(b, p, wt)
			pt.zeroThreshold = math.Float64frombits(u)
		case 8, 9:
			if num == 8 && hasPos || num == 9 && hasNeg {
				return errWire // pdata merges the two
			}
			if v, pos, err = lenField(b, p, wt); err != nil {
				return err
			}
			var offset int64
			var buckets string
			if offset, buckets, err = w.buckets(st, v); err != nil {
				return err
			}
			if num == 8 {
				hasPos, pt.posOffset, pt.posBuckets = true, offset, buckets
			} else {
				hasNeg, pt.negOffset, pt.negBuckets = true, offset, buckets
			}
		case 11:
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.checkExemplar(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.attrs = w.attrsString(&w.attrs)
	pt.sum, pt.min, pt.max = optI64(hasSum, sum), optI64(hasMin, mn), optI64(hasMax, mx)
	st.exps = append(st.exps, pt)
	return nil
}

// buckets reads an exponential histogram's Buckets: its offset and its counts as JSON.
func (w *wireStager) buckets(st *stage, b []byte) (int64, string, error) {
	var offset int64
	w.u64 = w.u64[:0]
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return 0, "", err
		}
		var u uint64
		switch {
		case num == 1:
			u, pos, err = varintField(b, p, wt)
			offset = int64(otlpwire.Zigzag32(u))
		case num == 2 && wt == otlpwire.Len:
			var v []byte
			if v, pos, err = otlpwire.ConsumeBytes(b, p); err != nil {
				return 0, "", err
			}
			for q := 0; q < len(v); {
				if u, q, err = otlpwire.ConsumeVarint(v, q); err != nil {
					return 0, "", err
				}
				w.u64 = append(w.u64, u)
			}
		case num == 2:
			u, pos, err = varintField(b, p, wt)
			w.u64 = append(w.u64, u)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return 0, "", err
		}
	}
	return offset, st.json(func(b []byte) []byte { return appendJSONUint64s(b, w.u64) }), nil
}

func (w *wireStager) summaryPoint(st *stage, metric int, rawID int64, b []byte) error {
	pt := summaryPoint{pointHead: pointHead{metric: metric, rawID: rawID}}
	w.attrs = append(w.attrs[:0], '{')
	w.val = append(w.val[:0], '[')
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var ok bool
		if pos, ok, err = w.pointField(&pt.pointHead, b, num, wt, p, 7, 8); ok {
			if err != nil {
				return err
			}
			continue
		}
		var u uint64
		switch num {
		case 4:
			u, pos, err = i64Field(b, p, wt)
			pt.count = int64(u)
		case 5:
			u, pos, err = i64Field(b, p, wt)
			pt.sum = math.Float64frombits(u)
		case 6:
			var v []byte
			if v, pos, err = lenField(b, p, wt); err == nil {
				err = w.quantile(v)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	pt.attrs = w.attrsString(&w.attrs)
	w.val = append(w.val, ']')
	pt.quantiles = w.str(w.val)
	st.sums = append(st.sums, pt)
	return nil
}

// quantile appends a ValueAtQuantile to the JSON array in w.val.
func (w *wireStager) quantile(b []byte) error {
	var q, v float64
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		var u uint64
		switch num {
		case 1:
			u, pos, err = i64Field(b, p, wt)
			q = math.Float64frombits(u)
		case 2:
			u, pos, err = i64Field(b, p, wt)
			v = math.Float64frombits(u)
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	if len(w.val) > 1 {
		w.val = append(w.val, ',')
	}
	w.val = append(w.val, `{"q":`...)
	w.val = appendJSONFloat(w.val, q)
	w.val = append(w.val, `,"v":`...)
	w.val = appendJSONFloat(w.val, v)
	w.val = append(w.val, '}')
	return nil
}

// checkExemplar checks an Exemplar, which the stage does not keep.
func (w *wireStager) checkExemplar(b []byte) error {
	for pos := 0; pos < len(b); {
		num, wt, p, err := otlpwire.ConsumeTag(b, pos)
		if err != nil {
			return err
		}
		switch num {
		case 2, 3, 6:
			_, pos, err = i64Field(b, p, wt)
		case 4:
			_, pos, err = idField(b, p, wt, 8)
		case 5:
			_, pos, err = idField(b, p, wt, 16)
		case 7:
			var kv []byte
			if kv, pos, err = lenField(b, p, wt); err == nil {
				w.scratch, _, _, _, err = w.appendKV(w.scratch[:0], kv, 0)
			}
		default:
			pos, err = otlpwire.ConsumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
