package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/otelbench/otelbench/internal/sqlitec"
)

// traceChunkVersion is the first byte of every trace_chunks.packed value.
const traceChunkVersion = 1

// statusError is OTLP's STATUS_CODE_ERROR, counted in trace_chunks.errors.
const statusError = 2

// chunker packs a slice's spans by trace (stage.packChunks). Its buffers are reused across
// slices; only the packed output (stage.chunkBuf) grows with the slice, the rest with its
// largest trace.
type chunker struct {
	trace      map[string]int32 // trace id → index in first-span order
	head, tail []int32          // per trace, its first and last span
	next       []int32          // per span, the next span of its trace (-1: none)
	strs       map[string]uint32
	table      []byte // string table entries: uvarint len, bytes
	body       []byte
}

// str returns the index of s in the string table of the trace being packed (0 for "").
func (ch *chunker) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := ch.strs[s]; ok {
		return i
	}
	i := uint32(len(ch.strs) + 1)
	ch.strs[s] = i
	ch.table = binary.AppendUvarint(ch.table, uint64(len(s)))
	ch.table = append(ch.table, s...)
	return i
}

// link groups spans by trace: after it, head lists the traces in first-span order and next
// chains each trace's spans in id order.
func (ch *chunker) link(spans []spanRow) {
	if ch.trace == nil {
		ch.trace, ch.strs = map[string]int32{}, map[string]uint32{}
	}
	clear(ch.trace)
	ch.head, ch.tail, ch.next = ch.head[:0], ch.tail[:0], ch.next[:0]
	for i := range spans {
		tid := spans[i].traceID
		ch.next = append(ch.next, -1)
		t, ok := ch.trace[tid]
		if !ok {
			t = int32(len(ch.head))
			ch.trace[tid] = t
			ch.head, ch.tail = append(ch.head, int32(i)), append(ch.tail, int32(i))
			continue
		}
		ch.next[ch.tail[t]], ch.tail[t] = int32(i), int32(i)
	}
}

// hexUint64 parses the 16-digit lowercase hex ids hexID writes; anything else is 0.
func hexUint64(s string) uint64 {
	if len(s) != 16 {
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

// chunkRow is one trace_chunks row of a slice: the spans of one trace, packed by the stager
// (stage.packChunks) into stage.chunkBuf[off:end].
type chunkRow struct {
	traceID                    string
	first, last, count, errors int64
	off, end                   int
}

// maxChunkBuf bounds the packed-chunk buffer a stage keeps between slices: one huge trace's
// spans do not stay in the heap for good.
const maxChunkBuf = 4 << 20

// packChunks packs the staged spans per trace, one chunkRow each, so that the projector's
// committing thread only inserts them (writeTraceChunks). It runs where the slice is staged:
// on the stager while catching up, in step with the committing thread's previous slice.
func (st *stage) packChunks() {
	st.chunks = st.chunks[:0]
	if cap(st.chunkBuf) > maxChunkBuf {
		st.chunkBuf = nil
	}
	st.chunkBuf = st.chunkBuf[:0]
	if len(st.spans) == 0 {
		return
	}
	ch := &st.chunker
	ch.link(st.spans)
	out := st.chunkBuf
	for _, head := range ch.head {
		clear(ch.strs)
		ch.table, ch.body = ch.table[:0], ch.body[:0]
		first := &st.spans[head]
		row := chunkRow{first: first.id}
		row.traceID = first.traceID
		base := first.start
		b := ch.body
		for i := head; i >= 0; i = ch.next[i] {
			s := &st.spans[i]
			row.last = s.id
			row.count++
			if s.statusCode == statusError {
				row.errors++
			}
			b = binary.BigEndian.AppendUint64(b, hexUint64(s.spanID))
			b = binary.BigEndian.AppendUint64(b, hexUint64(s.parent))
			b = binary.AppendVarint(b, s.start-base)
			b = binary.AppendVarint(b, s.end-s.start)
			b = binary.AppendUvarint(b, uint64(s.kind))
			b = binary.AppendUvarint(b, uint64(s.statusCode))
			svc, _ := st.resources[s.res].service.(string)
			b = binary.AppendUvarint(b, uint64(ch.str(svc)))
			b = binary.AppendUvarint(b, uint64(ch.str(s.name)))
			b = binary.AppendUvarint(b, uint64(ch.str(s.statusMsg)))
			attrs := s.attrs
			if attrs == "{}" {
				attrs = ""
			}
			b = binary.AppendUvarint(b, uint64(len(attrs)))
			b = append(b, attrs...)
		}
		ch.body = b
		row.off = len(out)
		out = append(out, traceChunkVersion)
		out = binary.AppendUvarint(out, uint64(len(ch.strs)))
		out = append(out, ch.table...)
		out = binary.AppendVarint(out, base)
		out = binary.AppendUvarint(out, uint64(row.count))
		out = append(out, ch.body...)
		row.end = len(out)
		st.chunks = append(st.chunks, row)
	}
	st.chunkBuf = out
	if cap(ch.body) > 1<<20 { // do not hold on to one huge trace's buffers
		ch.body, ch.table = nil, nil
	}
}

// writeTraceChunks inserts the slice's packed chunks (packChunks), one trace_chunks row per
// trace, in the slice's transaction. The rows' blobs stay in the stage's buffer until the next
// slice is staged into it, after the bulk flushes that copy them.
func (p *projector) writeTraceChunks() error {
	st := &p.stage
	for _, c := range st.chunks {
		if err := p.ins.chunks.add(sqlitec.Text(c.traceID), sqlitec.Int(c.first), sqlitec.Int(c.last), sqlitec.Int(c.count),
			sqlitec.Int(c.errors), sqlitec.Blob(st.chunkBuf[c.off:c.end:c.end])); err != nil {
			return fmt.Errorf("insert trace chunks: %w", err)
		}
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
