package otlpwire

import (
	"errors"
	"io"
)

// The walker. Both readers of OTLP bytes without pdata, the ingest scanner (internal/otlpcodec)
// and the projector's stager (internal/stage), read every message with a Reader, one field at a
// time against the message's table (messages.go), so the checks pdata v1.71's UnmarshalProto
// makes live here once: each known field's wire type, id lengths, whole packed runs, unknown
// fields skipped as pdata skips them. pdata checks no UTF-8, and neither does the walker. What
// a consumer keeps it reads from the Reader; a subtree it does not keep it hands to Check,
// which walks it whole, the AnyValue family's nesting limit included.

var (
	// ErrMismatch reports a known field pdata refuses: the wrong wire type, an id that is
	// neither empty nor 8/16 bytes, or a packed run of fixed64s that is not a multiple of 8.
	ErrMismatch = errors.New("otlp wire: field does not match its message")
	// ErrTooDeep reports an AnyValue nested to RecursionLimit, which pdata refuses.
	ErrTooDeep = errors.New("otlp wire: AnyValue nesting too deep")
)

// Reader reads a message's fields one at a time, checking each against the message's table as
// pdata does; the field read is in Num, Wire, Kind and U, and Bytes and Msg. It lives on its
// caller's stack, a scan keeps no state elsewhere (BenchmarkScanVsPdata, 0 allocs/op), and
// reading a field stores no pointer: a pointer stored through the Reader would take a GC
// write barrier while the stager's allocations keep the GC running (BenchmarkStage).
//
//	r := otlpwire.NewReader(&otlpwire.Span, b)
//	for r.Next() {
//		switch r.Num { ... }
//	}
//	if err := r.Err(); err != nil { ... }
type Reader struct {
	Num  int32
	Wire uint8  // the wire type
	Kind Kind   // KUnknown: a field the message does not know, skipped
	U    uint64 // a varint, fixed64 or fixed32 value

	m     *Message
	buf   []byte
	start int // where a length-delimited value starts; it ends at pos
	pos   int
	err   error
}

// NewReader returns a Reader of b, a message m.
func NewReader(m *Message, b []byte) Reader { return Reader{m: m, buf: b} }

// Next reads the next field; false at the end of the message or at an error (Err).
func (r *Reader) Next() bool {
	return r.pos < len(r.buf) && r.read()
}

// Err is the error that stopped Next, nil at the end of the message.
func (r *Reader) Err() error { return r.err }

// Bytes is the value of a length-delimited field (bytes, id, message, packed run), a view of
// the message's buffer.
func (r *Reader) Bytes() []byte { return r.buf[r.start:r.pos] }

// Msg is the message a KMessage field holds.
func (r *Reader) Msg() *Message { return r.m.fields[r.Num].Msg }

// fail stops the Reader at err.
func (r *Reader) fail(err error) bool {
	r.err, r.pos = err, len(r.buf)
	return false
}

// read reads the field at r.pos into r and checks it against the message's table as
// pdata does. A packed field given as one value has it in U (Wire tells which); a packed run
// is in Bytes, its varints already checked whole. Tags and lengths under 128 take a fast path:
// nearly all of OTLP's (BenchmarkScanVsPdata).
func (r *Reader) read() bool {
	b, pos := r.buf, r.pos
	var tag uint64
	if c := b[pos]; c < 0x80 {
		tag, pos = uint64(c), pos+1
	} else {
		var err error
		if tag, pos, err = ConsumeVarint(b, pos); err != nil {
			return r.fail(err)
		}
	}
	num, wt := int32(tag>>3), uint8(tag&7)
	if num <= 0 {
		return r.fail(ErrInvalid)
	}
	var d FieldDesc
	if fields := r.m.fields; int(num) < len(fields) {
		d = fields[num]
	}
	r.Num, r.Wire, r.Kind = num, wt, d.Kind
	var err error
	switch {
	case d.Kind == KUnknown:
		pos, err = ConsumeUnknown(b, pos, wt)
	case wt != d.wire && (d.Kind < KPackedFixed64 || wt != Len):
		err = ErrMismatch
	case wt == Varint:
		r.U, pos, err = ConsumeVarint(b, pos)
	case wt == I64:
		r.U, pos, err = ConsumeFixed64(b, pos)
	case wt == I32:
		var u uint32
		u, pos, err = ConsumeFixed32(b, pos)
		r.U = uint64(u)
	default:
		n := 0
		if pos < len(b) && b[pos] < 0x80 {
			n, pos = int(b[pos]), pos+1
			if pos+n > len(b) {
				return r.fail(io.ErrUnexpectedEOF)
			}
			pos += n
		} else if n, pos, err = ConsumeLen(b, pos); err != nil {
			break
		}
		r.start = pos - n
		if d.Kind != KBytes && d.Kind != KMessage {
			err = checkLen(d.Kind, b[pos-n:pos])
		}
	}
	if err != nil {
		return r.fail(err)
	}
	r.pos = pos
	return true
}

// checkLen checks a length-delimited value of kind k: ids and packed runs.
func checkLen(k Kind, v []byte) error {
	switch k {
	case KTraceID:
		if len(v) != 0 && len(v) != 16 {
			return ErrMismatch
		}
	case KSpanID:
		if len(v) != 0 && len(v) != 8 {
			return ErrMismatch
		}
	case KPackedFixed64:
		if len(v)%8 != 0 {
			return ErrMismatch
		}
	case KPackedVarint:
		for q := 0; q < len(v); {
			var err error
			if _, q, err = ConsumeVarint(v, q); err != nil {
				return err
			}
		}
	}
	return nil
}

// Check walks b, a message m at depth (the AnyValue-family levels above it, as pdata counts
// them), and every message under it, as pdata's UnmarshalProto would. It returns the number
// of messages walked, m included: the objects pdata would allocate to decode b.
func Check(m *Message, b []byte, depth int) (int, error) {
	if m.anyFamily {
		if depth >= RecursionLimit {
			return 0, ErrTooDeep
		}
		depth++
	} else {
		depth = 0
	}
	messages := 1
	r := NewReader(m, b)
	for r.Next() {
		if r.Kind == KMessage {
			n, err := Check(r.Msg(), r.Bytes(), depth)
			if err != nil {
				return 0, err
			}
			messages += n
		}
	}
	return messages, r.err
}
