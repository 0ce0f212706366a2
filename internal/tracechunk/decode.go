package tracechunk

import (
	"encoding/binary"
	"errors"
)

// ErrBadTraceChunk reports a trace_chunks.packed value this build cannot decode.
var ErrBadTraceChunk = errors.New("malformed trace chunk")

// Ref is where a string of a packed chunk lies: Off is its offset in the chunk plus the base
// given to Decode, N its length. An empty string is the zero Ref.
type Ref struct{ Off, N uint32 }

// The strings of a span, by their index in Text.Str.
const (
	StrService = iota
	StrName
	StrStatusMessage
	StrAttributes
)

// Text is a span's small fields and the places of its strings. It holds no pointer, so a
// column of them costs the GC nothing to scan.
type Text struct {
	Kind, Status int32
	Resource     uint32 // index into the chunk's resource table
	Str          [4]Ref // service, name, status message, attributes (StrService, ...)
}

// Columns receive a chunk's spans in spans.id order, one entry each: every slice must be as
// long as the chunk's span count (trace_chunks.span_count).
type Columns struct {
	IDs, Parents []uint64 // span and parent ids; 0 for none
	Start, End   []int64  // Unix nanoseconds
	Text         []Text
}

// Decode decodes the packed chunk p into c, each string as its place in p plus base (the
// chunk's offset in the caller's buffer, so the strings are read there with no copy). It
// returns where the chunk's resource table lies: Resources.N/16 resources.hash values of 16
// bytes, which Text.Resource indexes. It fails with ErrBadTraceChunk on a value of another
// version, a malformed one, or one whose span count is not len(c.IDs).
//
// It writes straight into the columns rather than through a per-span callback, which was a
// third of a 161,000-span fetch's CPU (BenchmarkTrace161k in internal/query).
func Decode(p []byte, base uint32, c Columns) (resources Ref, err error) {
	if len(p) == 0 || p[0] != Version {
		return Ref{}, ErrBadTraceChunk
	}
	d := decoder{p: p, pos: 1}
	n := d.uvarint()
	if n > uint64(len(p)) {
		return Ref{}, ErrBadTraceChunk
	}
	var small [64]Ref
	strs := small[:0]
	if n+1 > uint64(len(small)) {
		strs = make([]Ref, 0, n+1)
	}
	strs = append(strs, Ref{})
	for range n {
		strs = append(strs, d.ref(base))
	}
	nres := d.uvarint()
	if nres > uint64(len(p)-d.pos)/16 {
		return Ref{}, ErrBadTraceChunk
	}
	resources = Ref{base + uint32(d.pos), uint32(16 * nres)}
	d.pos += int(16 * nres)
	t0 := d.varint()
	count := d.uvarint()
	if d.bad || count != uint64(len(c.IDs)) || len(c.Parents) != len(c.IDs) ||
		len(c.Start) != len(c.IDs) || len(c.End) != len(c.IDs) || len(c.Text) != len(c.IDs) {
		return Ref{}, ErrBadTraceChunk
	}
	str := func(i uint64) Ref {
		if i >= uint64(len(strs)) {
			d.bad = true
			return Ref{}
		}
		return strs[i]
	}
	// Local columns, each resliced to the span count, so the loop indexes them without
	// bounds checks.
	spans := len(c.IDs)
	ids, parents, start, end, text := c.IDs, c.Parents[:spans], c.Start[:spans], c.End[:spans], c.Text[:spans]
	for j := range ids {
		if len(p)-d.pos < 16 {
			return Ref{}, ErrBadTraceChunk
		}
		ids[j] = binary.BigEndian.Uint64(p[d.pos:])
		parents[j] = binary.BigEndian.Uint64(p[d.pos+8:])
		d.pos += 16
		s := t0 + d.varint()
		start[j] = s
		end[j] = s + d.varint()
		tx := &text[j]
		tx.Kind = int32(d.uvarint())
		tx.Status = int32(d.uvarint())
		tx.Str[StrService] = str(d.uvarint())
		tx.Str[StrName] = str(d.uvarint())
		tx.Str[StrStatusMessage] = str(d.uvarint())
		r := d.uvarint()
		if r >= nres {
			return Ref{}, ErrBadTraceChunk
		}
		tx.Resource = uint32(r)
		l := d.uvarint() // the attributes, read here rather than by d.ref: not inlined, it cost ~5%
		if l > uint64(len(p)-d.pos) {
			return Ref{}, ErrBadTraceChunk
		}
		tx.Str[StrAttributes] = Ref{}
		if l > 0 {
			tx.Str[StrAttributes] = Ref{base + uint32(d.pos), uint32(l)}
		}
		d.pos += int(l)
		if d.bad {
			return Ref{}, ErrBadTraceChunk
		}
	}
	if d.pos != len(p) {
		return Ref{}, ErrBadTraceChunk
	}
	return resources, nil
}

// decoder reads varints as encoding/binary writes them: at most 10 bytes, bits past the
// 64th dropped, bad on a short or overlong one.
type decoder struct {
	p   []byte
	pos int
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.pos < len(d.p) && d.p[d.pos] < 0x80 { // one byte: most kinds, indexes, lengths
		v := uint64(d.p[d.pos])
		d.pos++
		return v
	}
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if d.pos >= len(d.p) {
			d.bad = true
			return 0
		}
		c := d.p[d.pos]
		d.pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	d.bad = true
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// ref reads a length-prefixed string and returns its place (plus base).
func (d *decoder) ref(base uint32) Ref {
	l := d.uvarint()
	if l > uint64(len(d.p)-d.pos) {
		d.bad = true
		return Ref{}
	}
	r := Ref{}
	if l > 0 {
		r = Ref{base + uint32(d.pos), uint32(l)}
	}
	d.pos += int(l)
	return r
}
