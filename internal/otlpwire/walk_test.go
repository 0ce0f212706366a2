package otlpwire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func tagged(num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(nil, num, typ)
}

func lenField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(tagged(num, protowire.BytesType), v)
}

// TestReaderChecksFields: each kind takes only the wire type pdata's generated code takes, ids
// only their sizes, packed runs only whole values; unknown fields are skipped.
func TestReaderChecksFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *Message
		b    []byte
		want error
	}{
		{"varint", &Span, protowire.AppendVarint(tagged(6, protowire.VarintType), 2), nil},
		{"varint as fixed64", &Span, protowire.AppendFixed64(tagged(6, protowire.Fixed64Type), 2), ErrMismatch},
		{"fixed64", &Span, protowire.AppendFixed64(tagged(7, protowire.Fixed64Type), 2), nil},
		{"fixed64 as varint", &Span, protowire.AppendVarint(tagged(7, protowire.VarintType), 2), ErrMismatch},
		{"fixed32", &Span, protowire.AppendFixed32(tagged(16, protowire.Fixed32Type), 2), nil},
		{"fixed32 as bytes", &Span, lenField(16, []byte{1, 2, 3, 4}), ErrMismatch},
		{"string as varint", &Span, protowire.AppendVarint(tagged(5, protowire.VarintType), 1), ErrMismatch},
		{"trace id 16", &Span, lenField(1, make([]byte, 16)), nil},
		{"trace id empty", &Span, lenField(1, nil), nil},
		{"trace id 8", &Span, lenField(1, make([]byte, 8)), ErrMismatch},
		{"span id 16", &Span, lenField(2, make([]byte, 16)), ErrMismatch},
		{"packed fixed64 run", &HistogramPoint, lenField(6, make([]byte, 16)), nil},
		{"packed fixed64 cut run", &HistogramPoint, lenField(6, make([]byte, 12)), ErrMismatch},
		{"packed fixed64 one", &HistogramPoint, protowire.AppendFixed64(tagged(6, protowire.Fixed64Type), 1), nil},
		{"packed fixed64 as varint", &HistogramPoint, protowire.AppendVarint(tagged(6, protowire.VarintType), 1), ErrMismatch},
		{"packed varint run", &Buckets, lenField(2, []byte{1, 0x80, 1}), nil},
		{"packed varint cut run", &Buckets, lenField(2, []byte{1, 0x80}), io.ErrUnexpectedEOF},
		{"packed varint one", &Buckets, protowire.AppendVarint(tagged(2, protowire.VarintType), 300), nil},
		{"unknown field", &Span, protowire.AppendFixed32(tagged(99, protowire.Fixed32Type), 1), nil},
		{"cut length", &Span, lenField(5, []byte("name"))[:4], io.ErrUnexpectedEOF},
		{"field 0", &Span, []byte{0x02, 0}, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(tc.m, tc.b)
			for r.Next() {
			}
			if err := r.Err(); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestReaderValues: the Reader holds each value as the consumer reads it.
func TestReaderValues(t *testing.T) {
	b := protowire.AppendVarint(tagged(6, protowire.VarintType), 300)
	b = protowire.AppendFixed64(append(b, tagged(7, protowire.Fixed64Type)...), 1<<40)
	b = protowire.AppendFixed32(append(b, tagged(16, protowire.Fixed32Type)...), 7)
	b = append(b, lenField(5, []byte("op"))...)
	b = append(b, lenField(11, nil)...)
	type field struct {
		u    uint64
		b    string
		kind Kind
		msg  *Message
	}
	var got []field
	r := NewReader(&Span, b)
	for r.Next() {
		f := field{u: r.U, kind: r.Kind}
		if r.Wire == Len {
			f.b = string(r.Bytes())
		}
		if r.Kind == KMessage {
			f.msg = r.Msg()
		}
		got = append(got, f)
	}
	if r.Err() != nil || len(got) != 5 {
		t.Fatalf("got %d fields, %v; want 5, nil", len(got), r.Err())
	}
	if got[0].u != 300 || got[1].u != 1<<40 || got[2].u != 7 || got[3].b != "op" {
		t.Errorf("got %d %d %d %q, want 300 %d 7 op", got[0].u, got[1].u, got[2].u, got[3].b, uint64(1<<40))
	}
	if got[4].kind != KMessage || got[4].msg != &SpanEvent {
		t.Errorf("field 11: got kind %d message %v, want a Span.Event", got[4].kind, got[4].msg)
	}
}

// nestedValue is an AnyValue holding arrays n levels deep (2n+1 levels of the AnyValue family).
func nestedValue(n int) []byte {
	v := protowire.AppendVarint(tagged(3, protowire.VarintType), 1) // int_value
	for range n {
		v = lenField(5, lenField(1, v)) // AnyValue{array_value: ArrayValue{values: [v]}}
	}
	return v
}

// TestCheck: Check counts every message and stops the AnyValue family at RecursionLimit.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		b        []byte
		messages int
		want     error
	}{
		{"flat", nestedValue(0), 1, nil},
		{"two arrays", nestedValue(2), 5, nil},
		{"just within the limit", nestedValue(49), 99, nil},
		{"at the limit", nestedValue(50), 0, ErrTooDeep},
		{"cut varint inside", lenField(5, lenField(1, []byte{0x18, 0x80})), 0, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Check(&AnyValue, tc.b, 0)
			if n != tc.messages || !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("got %d messages, %v; want %d, %v", n, err, tc.messages, tc.want)
			}
		})
	}
	// A message outside the family resets the depth: a Resource's attributes start at 0.
	kv := lenField(2, nestedValue(49))
	if n, err := Check(&Resource, lenField(1, append(lenField(1, []byte("k")), kv...)), 0); err != nil {
		t.Errorf("resource: got %v after %d messages, want nil (KeyValue at depth 0)", err, n)
	}
	if !bytes.Equal(nestedValue(0), []byte{0x18, 1}) {
		t.Errorf("nestedValue(0) = %x, want 1801", nestedValue(0))
	}
}
