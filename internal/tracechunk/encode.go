package tracechunk

import (
	"encoding/binary"

	"github.com/otelbench/otelbench/internal/hexid"
)

// Version is the first byte of every trace_chunks.packed value. There is one: a data
// directory written with another is refused when the store opens it (its schema version).
const Version = 2

// StatusError is OTLP's STATUS_CODE_ERROR, counted in trace_chunks.errors.
const StatusError = 2

// Span is what the Encoder packs of one span.
type Span struct {
	SpanID, ParentID string // 16-digit lowercase hex; any other form packs as 0
	Start, End       int64  // Unix nanoseconds
	Kind, Status     int64
	Service, Name    string
	StatusMessage    string
	Attributes       string   // JSON; "{}" packs as the empty map
	Resource         [16]byte // resources.hash of the span's resource
}

// Encoder packs the spans of one trace at a time (Begin, Add, Append). Its buffers are reused
// across traces and slices; the projector's stager owns one.
type Encoder struct {
	strs  map[string]uint32
	table []byte // string table entries: uvarint len, bytes
	res   map[[16]byte]uint32
	rtab  []byte // resource table: 16 bytes an entry
	body  []byte
	base  int64
	count uint64
}

// Begin starts a trace whose first span starts at base (Unix nanoseconds).
func (e *Encoder) Begin(base int64) {
	if e.strs == nil {
		e.strs, e.res = map[string]uint32{}, map[[16]byte]uint32{}
	}
	clear(e.strs)
	clear(e.res)
	e.table, e.rtab, e.body = e.table[:0], e.rtab[:0], e.body[:0]
	e.base, e.count = base, 0
}

// str returns the index of s in the string table of the trace being packed (0 for "").
func (e *Encoder) str(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := e.strs[s]; ok {
		return i
	}
	i := uint32(len(e.strs) + 1)
	e.strs[s] = i
	e.table = binary.AppendUvarint(e.table, uint64(len(s)))
	e.table = append(e.table, s...)
	return i
}

// resource returns the index of hash in the resource table of the trace being packed.
func (e *Encoder) resource(hash [16]byte) uint32 {
	if i, ok := e.res[hash]; ok {
		return i
	}
	i := uint32(len(e.res))
	e.res[hash] = i
	e.rtab = append(e.rtab, hash[:]...)
	return i
}

// Add packs one span of the trace begun.
func (e *Encoder) Add(s *Span) {
	b := e.body
	span, _ := hexid.Parse64(s.SpanID)
	parent, _ := hexid.Parse64(s.ParentID)
	b = binary.BigEndian.AppendUint64(b, span)
	b = binary.BigEndian.AppendUint64(b, parent)
	b = binary.AppendVarint(b, s.Start-e.base)
	b = binary.AppendVarint(b, s.End-s.Start)
	b = binary.AppendUvarint(b, uint64(s.Kind))
	b = binary.AppendUvarint(b, uint64(s.Status))
	b = binary.AppendUvarint(b, uint64(e.str(s.Service)))
	b = binary.AppendUvarint(b, uint64(e.str(s.Name)))
	b = binary.AppendUvarint(b, uint64(e.str(s.StatusMessage)))
	b = binary.AppendUvarint(b, uint64(e.resource(s.Resource)))
	attrs := s.Attributes
	if attrs == "{}" {
		attrs = ""
	}
	b = binary.AppendUvarint(b, uint64(len(attrs)))
	b = append(b, attrs...)
	e.body = b
	e.count++
}

// Append appends the packed value of the trace begun to out and returns it.
func (e *Encoder) Append(out []byte) []byte {
	out = append(out, Version)
	out = binary.AppendUvarint(out, uint64(len(e.strs)))
	out = append(out, e.table...)
	out = binary.AppendUvarint(out, uint64(len(e.res)))
	out = append(out, e.rtab...)
	out = binary.AppendVarint(out, e.base)
	out = binary.AppendUvarint(out, e.count)
	out = append(out, e.body...)
	return out
}

// Trim drops buffers grown past 1 MiB, so one huge trace's do not stay in the heap for good;
// the stager calls it after each slice.
func (e *Encoder) Trim() {
	if cap(e.body) > 1<<20 {
		e.body, e.table, e.rtab = nil, nil, nil
	}
}
