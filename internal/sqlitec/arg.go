package sqlitec

import (
	"fmt"
	"math"
	"unsafe"
)

// Arg is one value to bind, held without an interface. Passing an int64 or a string as an any
// allocates it on the heap unless it fits the interface's word (runtime.convT64,
// convTstring): for the store's projector that was every id, time and text of every row it
// inserts, on the thread that bounds a catch-up. An Arg is built on the caller's stack and
// copied by value. The zero Arg is NULL.
type Arg struct {
	s    string // Text's; Blob's bytes; the type's name for argBad
	i    int64  // Int, Bool; Float's bits
	kind argKind
}

type argKind uint8

const (
	argNull argKind = iota
	argInt
	argFloat
	argText
	argBlob
	argBad // a Go type Value cannot bind: binding fails
)

// Null is SQL NULL.
func Null() Arg { return Arg{} }

// Int binds an INTEGER.
func Int(v int64) Arg { return Arg{kind: argInt, i: v} }

// Bool binds 1 or 0.
func Bool(v bool) Arg {
	if v {
		return Int(1)
	}
	return Int(0)
}

// Float binds a REAL.
func Float(v float64) Arg { return Arg{kind: argFloat, i: int64(math.Float64bits(v))} }

// Text binds a TEXT; "" is an empty text, not NULL.
func Text(v string) Arg { return Arg{kind: argText, s: v} }

// Blob binds a BLOB; a nil slice is NULL, an empty non-nil one an empty blob.
func Blob(v []byte) Arg {
	if v == nil {
		return Arg{}
	}
	return Arg{kind: argBlob, s: unsafe.String(unsafe.SliceData(v), len(v))}
}

// Value converts what Exec accepts as an any: nil, int64, int, int32, uint32, bool, float64,
// string or []byte. Any other type makes the statement's binding fail with an error that
// names it.
func Value(v any) Arg {
	switch v := v.(type) {
	case nil:
		return Arg{}
	case int64:
		return Int(v)
	case int:
		return Int(int64(v))
	case int32:
		return Int(int64(v))
	case uint32:
		return Int(int64(v))
	case bool:
		return Bool(v)
	case float64:
		return Float(v)
	case string:
		return Text(v)
	case []byte:
		return Blob(v)
	default:
		return Arg{kind: argBad, s: fmt.Sprintf("%T", v)}
	}
}
