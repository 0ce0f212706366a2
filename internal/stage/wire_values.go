package stage

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/otelbench/otelbench/internal/hexid"
	"github.com/otelbench/otelbench/internal/jsonstr"
	"github.com/otelbench/otelbench/internal/otlpwire"
)

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
	r := otlpwire.NewReader(&otlpwire.KeyValue, b)
	for r.Next() {
		switch r.Num {
		case 1:
			key = r.Bytes()
		case 2:
			if hasValue {
				return out, nil, nil, 0, errWire // pdata merges the two
			}
			value, hasValue = r.Bytes(), true
		case 3:
			return out, nil, nil, 0, errWire // a string-table key
		}
	}
	if err := r.Err(); err != nil {
		return out, nil, nil, 0, err
	}
	out = jsonstr.Append(out, bstr(key))
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
	r := otlpwire.NewReader(&otlpwire.AnyValue, b)
	for r.Next() {
		if r.Kind == otlpwire.KUnknown {
			continue
		}
		out, kind, str = out[:start], r.Num, nil // a later value replaces an earlier one
		switch r.Num {
		case 1:
			str = r.Bytes()
			out = jsonstr.Append(out, bstr(str))
		case 2:
			out = strconv.AppendBool(out, r.U != 0)
		case 3:
			out = strconv.AppendInt(out, int64(r.U), 10)
		case 4:
			out = appendJSONFloat(out, math.Float64frombits(r.U))
		case 5:
			out, err = w.appendArray(out, r.Bytes(), depth)
		case 6:
			out, err = w.appendKVList(out, r.Bytes(), depth)
		case 7:
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, r.Bytes())
			out = append(out, '"')
		case 8:
			return out, 0, nil, errWire // a string-table value
		}
		if err != nil {
			return out, 0, nil, err
		}
	}
	if err := r.Err(); err != nil {
		return out, 0, nil, err
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
	return w.appendList(out, b, depth, &otlpwire.ArrayValue, '[', ']')
}

func (w *wireStager) appendKVList(out, b []byte, depth int) ([]byte, error) {
	return w.appendList(out, b, depth, &otlpwire.KeyValueList, '{', '}')
}

// appendList appends the field-1 entries of b, a list m, between open and close: AnyValues
// of an ArrayValue, KeyValues of a KeyValueList.
func (w *wireStager) appendList(out, b []byte, depth int, m *otlpwire.Message, open, close byte) ([]byte, error) {
	if depth >= w.deep.limit() {
		return out, errWire
	}
	depth++
	out = append(out, open)
	first := true
	r := otlpwire.NewReader(m, b)
	for r.Next() {
		if r.Num != 1 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		var err error
		if m == &otlpwire.KeyValueList {
			out, _, _, _, err = w.appendKV(out, r.Bytes(), depth)
		} else {
			out, _, _, err = w.appendValue(out, r.Bytes(), depth)
		}
		if err != nil {
			return out, err
		}
	}
	if err := r.Err(); err != nil {
		return out, err
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
	if w.Strs == nil || len(b) == 0 {
		return string(b)
	}
	buf := append(w.Strs.Alloc(len(b)), b...)
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// hexID is the package's hexID, its string in strs when set.
func (w *wireStager) hexID(id []byte) string {
	if w.Strs == nil || hexid.IsZero(id) {
		return hexID(id)
	}
	var buf [32]byte // a trace id's
	return w.str(hexid.Append(buf[:0], id))
}

// requiredIDs is the package's requiredIDs, the strings in strs when set.
func (w *wireStager) requiredIDs(traceID, spanID []byte) (string, string) {
	return zeroIDs(w.hexID(traceID), w.hexID(spanID))
}
