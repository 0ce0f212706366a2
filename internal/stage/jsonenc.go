package stage

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelbench/otelbench/internal/hexid"
	"github.com/otelbench/otelbench/internal/jsonstr"
)

// The projector writes attribute maps and non-string bodies as JSON text. These appenders
// avoid Map.AsRaw + encoding/json, which allocate a Go map and interface per value; strings
// are written as encoding/json writes them (jsonstr).

// appendJSONFloat appends f as a JSON number; non-finite values become strings.
func appendJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendJSONValue appends v as JSON: bytes as base64 strings, empty as null.
func appendJSONValue(b []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return jsonstr.Append(b, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return appendJSONFloat(b, v.Double())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(b, v.Bool())
	case pcommon.ValueTypeMap:
		return appendJSONMap(b, v.Map())
	case pcommon.ValueTypeSlice:
		sl := v.Slice()
		b = append(b, '[')
		for i := range sl.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, sl.At(i))
		}
		return append(b, ']')
	case pcommon.ValueTypeBytes:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes().AsRaw())
		return append(b, '"')
	}
	return append(b, "null"...)
}

// appendJSONMap appends m as a JSON object in the map's order.
func appendJSONMap(b []byte, m pcommon.Map) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = appendJSONValue(b, v)
	}
	return append(b, '}')
}

// appendJSONMapSorted appends m as a JSON object with top-level keys sorted, a canonical form
// for hashing resources and scopes.
func appendJSONMapSorted(b []byte, m pcommon.Map) []byte {
	keys := make([]string, 0, m.Len())
	for k := range m.All() {
		keys = append(keys, k)
	}
	if slices.IsSorted(keys) {
		return appendJSONMap(b, m)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		v, _ := m.Get(k)
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = appendJSONValue(b, v)
	}
	return append(b, '}')
}

// appendJSONUint64s appends a JSON array of unsigned integers.
func appendJSONUint64s(b []byte, s []uint64) []byte { return appendJSONArray(b, s, appendUint) }

// appendJSONFloat64s appends a JSON array of floats.
func appendJSONFloat64s(b []byte, s []float64) []byte { return appendJSONArray(b, s, appendJSONFloat) }

func appendUint(b []byte, u uint64) []byte { return strconv.AppendUint(b, u, 10) }

// appendJSONQuantile appends a summary's ValueAtQuantile as an element of the
// summary_points.quantiles array: {"q":quantile,"v":value}.
func appendJSONQuantile(b []byte, q, v float64) []byte {
	b = append(b, `{"q":`...)
	b = appendJSONFloat(b, q)
	b = append(b, `,"v":`...)
	b = appendJSONFloat(b, v)
	return append(b, '}')
}

// appendJSONArray appends s as a JSON array, each element appended by elem.
func appendJSONArray[T any](b []byte, s []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// hexID returns the lowercase hex of an ID, or "" (bound as SQL NULL: optText) when it is all
// zero. A string, not an any holding a string or nil: boxed, each id was a second allocation,
// together ~57% of the objects a mixed catch-up allocated.
func hexID(id []byte) string {
	if hexid.IsZero(id) {
		return ""
	}
	var buf [32]byte // a trace id's
	return string(hexid.Append(buf[:0], id))
}

// requiredIDs returns a span's or link's trace and span ids as hexID does, but an all-zero id
// (invalid per OTLP) as zeros instead of NULL: the schema requires them.
func requiredIDs(traceID, spanID []byte) (string, string) {
	return zeroIDs(hexID(traceID), hexID(spanID))
}

// zeroIDs replaces the empty (all-zero) trace id t and span id sp with zeros.
func zeroIDs(t, sp string) (string, string) {
	if t == "" {
		t = zeroTraceID
	}
	if sp == "" {
		sp = zeroSpanID
	}
	return t, sp
}

// The ids requiredIDs gives for all-zero ones.
const (
	zeroTraceID = "00000000000000000000000000000000"
	zeroSpanID  = "0000000000000000"
)
