package stage

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The projector writes attribute maps and non-string bodies as JSON text. These appenders
// avoid Map.AsRaw + encoding/json, which allocate a Go map and interface per value.

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal (invalid UTF-8 becomes U+FFFD).
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

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
		return AppendJSONString(b, v.Str())
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
		b = AppendJSONString(b, k)
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
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONValue(b, v)
	}
	return append(b, '}')
}

// appendJSONUint64s appends a JSON array of unsigned integers.
func appendJSONUint64s(b []byte, s []uint64) []byte {
	b = append(b, '[')
	for i, u := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, u, 10)
	}
	return append(b, ']')
}

// appendJSONFloat64s appends a JSON array of floats.
func appendJSONFloat64s(b []byte, s []float64) []byte {
	b = append(b, '[')
	for i, f := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONFloat(b, f)
	}
	return append(b, ']')
}

// hexID returns the lowercase hex of an ID, or "" (bound as SQL NULL: optText) when it is all
// zero. A string, not an any holding a string or nil: boxed, each id was a second allocation,
// together ~57% of the objects a mixed catch-up allocated.
func hexID(id []byte) string {
	if allZero(id) {
		return ""
	}
	var buf [32]byte // a trace id's
	return string(appendHex(buf[:0], id))
}

// appendHex appends the lowercase hex of id to dst.
func appendHex(dst, id []byte) []byte {
	for _, c := range id {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
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

func allZero(id []byte) bool {
	for _, c := range id {
		if c != 0 {
			return false
		}
	}
	return true
}
