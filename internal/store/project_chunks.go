package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// traceChunkVersion is the first byte of every trace_chunks.packed value.
const traceChunkVersion = 1

// statusError is OTLP's STATUS_CODE_ERROR, counted in trace_chunks.errors.
const statusError = 2

// chunkBuilder packs the spans of one trace within one projection slice.
type chunkBuilder struct {
	traceID     string
	first, last int64
	count       int64
	errors      int64 // spans with status ERROR
	strs        map[string]uint32
	table       []byte // string table entries: uvarint len, bytes
	nstr        uint32
	base        int64
	body        []byte
}

func (c *chunkBuilder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := c.strs[s]; ok {
		return i
	}
	c.nstr++
	c.strs[s] = c.nstr
	c.table = binary.AppendUvarint(c.table, uint64(len(s)))
	c.table = append(c.table, s...)
	return c.nstr
}

// chunker groups a slice's spans by trace into chunkBuilders, reused across slices.
type chunker struct {
	byTrace  map[string]*chunkBuilder
	builders []*chunkBuilder // in first-span order
	free     []*chunkBuilder
	out      []byte
}

func (ch *chunker) reset() {
	for _, c := range ch.builders {
		clear(c.strs)
		c.table, c.body, c.nstr, c.count, c.errors = c.table[:0], c.body[:0], 0, 0, 0
		if cap(c.body) > 1<<20 { // do not hold on to one huge trace's buffers
			c.body, c.table = nil, nil
		}
		ch.free = append(ch.free, c)
	}
	clear(ch.builders)
	ch.builders = ch.builders[:0]
	if ch.byTrace == nil {
		ch.byTrace = map[string]*chunkBuilder{}
	}
	clear(ch.byTrace)
}

func (ch *chunker) builder(traceID string, spanRow, start int64) *chunkBuilder {
	if c, ok := ch.byTrace[traceID]; ok {
		return c
	}
	var c *chunkBuilder
	if n := len(ch.free); n > 0 {
		c, ch.free = ch.free[n-1], ch.free[:n-1]
	} else {
		c = &chunkBuilder{strs: map[string]uint32{}}
	}
	c.traceID, c.first, c.base = traceID, spanRow, start
	ch.byTrace[traceID] = c
	ch.builders = append(ch.builders, c)
	return c
}

// hexUint64 parses the 16-digit lowercase hex ids hexID writes; anything else is 0.
func hexUint64(v any) uint64 {
	s, ok := v.(string)
	if !ok || len(s) != 16 {
		return 0
	}
	var n uint64
	for i := 0; i < 16; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			return 0
		}
		n = n<<4 | uint64(c)
	}
	return n
}

// writeTraceChunks packs the staged spans per trace and inserts one trace_chunks row per trace,
// in tx (the slice's transaction).
func (p *projector) writeTraceChunks() error {
	st := &p.stage
	if len(st.spans) == 0 {
		return nil
	}
	ch := &p.ins.chunker
	ch.reset()
	for i := range st.spans {
		s := &st.spans[i]
		tid, _ := s.traceID.(string)
		c := ch.builder(tid, s.id, s.start)
		c.last = s.id
		c.count++
		if s.statusCode == statusError {
			c.errors++
		}
		b := binary.BigEndian.AppendUint64(c.body, hexUint64(s.spanID))
		b = binary.BigEndian.AppendUint64(b, hexUint64(s.parent))
		b = binary.AppendVarint(b, s.start-c.base)
		b = binary.AppendVarint(b, s.end-s.start)
		b = binary.AppendUvarint(b, uint64(s.kind))
		b = binary.AppendUvarint(b, uint64(s.statusCode))
		svc, _ := st.resources[s.res].service.(string)
		b = binary.AppendUvarint(b, uint64(c.str(svc)))
		b = binary.AppendUvarint(b, uint64(c.str(s.name)))
		b = binary.AppendUvarint(b, uint64(c.str(s.statusMsg)))
		attrs := s.attrs
		if attrs == "{}" {
			attrs = ""
		}
		b = binary.AppendUvarint(b, uint64(len(attrs)))
		c.body = append(b, attrs...)
	}
	for _, c := range ch.builders {
		out := append(ch.out[:0], traceChunkVersion)
		out = binary.AppendUvarint(out, uint64(c.nstr))
		out = append(out, c.table...)
		out = binary.AppendVarint(out, c.base)
		out = binary.AppendUvarint(out, uint64(c.count))
		out = append(out, c.body...)
		ch.out = out
		// The driver copies the blob during Exec (bulk flush), so ch.out cannot be reused
		// before the flush: give each row its own copy.
		if err := p.ins.chunks.add(c.traceID, c.first, c.last, c.count, c.errors, append([]byte(nil), out...)); err != nil {
			return fmt.Errorf("insert trace chunks: %w", err)
		}
	}
	if cap(ch.out) > 1<<20 {
		ch.out = nil
	}
	return nil
}

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
	if d.byte() != traceChunkVersion {
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
	if d.byte() != traceChunkVersion {
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
