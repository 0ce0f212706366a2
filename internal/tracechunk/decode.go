package tracechunk

import "errors"

// PackedSpan is one span decoded from a trace_chunks row by DecodeTraceChunk. The strings are
// substrings of the packed value (no copies). ParentID 0 means no parent; Attributes is "" for
// an empty attribute map.
type PackedSpan struct {
	SpanID, ParentID                         uint64
	Start, End                               int64
	Kind, Status                             int32
	Service, Name, StatusMessage, Attributes string
}

// ErrBadTraceChunk reports a trace_chunks.packed value this build cannot decode.
var ErrBadTraceChunk = errors.New("store: malformed trace chunk")

// TraceChunkSpans returns the span count recorded in a packed chunk's header (for sizing).
func TraceChunkSpans(packed string) int {
	d := chunkDecoder{p: packed}
	if d.byte() != Version {
		return 0
	}
	n := d.uvarint()
	for range min(n, uint64(len(packed))) {
		d.skip(d.uvarint())
	}
	d.varint()
	c := d.uvarint()
	if d.bad || c > uint64(len(packed)) {
		return 0
	}
	return int(c)
}

// DecodeTraceChunk calls fn for every span of a trace_chunks.packed value, in spans.id order.
// The PackedSpan passed to fn is reused between calls.
func DecodeTraceChunk(packed string, fn func(*PackedSpan)) error {
	d := chunkDecoder{p: packed}
	if d.byte() != Version {
		return ErrBadTraceChunk
	}
	n := d.uvarint()
	if n > uint64(len(packed)) {
		return ErrBadTraceChunk
	}
	strs := make([]string, n+1)
	for i := uint64(1); i <= n; i++ {
		strs[i] = d.skip(d.uvarint())
	}
	base := d.varint()
	count := d.uvarint()
	if d.bad {
		return ErrBadTraceChunk
	}
	str := func(i uint64) string {
		if i >= uint64(len(strs)) {
			d.bad = true
			return ""
		}
		return strs[i]
	}
	var s PackedSpan
	for range count {
		if len(d.p) < 16 {
			return ErrBadTraceChunk
		}
		s.SpanID = be64(d.p)
		s.ParentID = be64(d.p[8:])
		d.p = d.p[16:]
		s.Start = base + d.varint()
		s.End = s.Start + d.varint()
		s.Kind = int32(d.uvarint())
		s.Status = int32(d.uvarint())
		s.Service = str(d.uvarint())
		s.Name = str(d.uvarint())
		s.StatusMessage = str(d.uvarint())
		s.Attributes = d.skip(d.uvarint())
		if d.bad {
			return ErrBadTraceChunk
		}
		fn(&s)
	}
	if len(d.p) != 0 {
		return ErrBadTraceChunk
	}
	return nil
}

type chunkDecoder struct {
	p   string
	bad bool
}

func (d *chunkDecoder) byte() byte {
	if len(d.p) == 0 {
		d.bad = true
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *chunkDecoder) uvarint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if len(d.p) == 0 {
			d.bad = true
			return 0
		}
		b := d.p[0]
		d.p = d.p[1:]
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	d.bad = true
	return 0
}

func (d *chunkDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *chunkDecoder) skip(n uint64) string {
	if n > uint64(len(d.p)) {
		d.bad = true
		return ""
	}
	s := d.p[:n]
	d.p = d.p[n:]
	return s
}

// be64 reads a big-endian uint64 from the first 8 bytes of s.
func be64(s string) uint64 {
	_ = s[7]
	return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
		uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
}
