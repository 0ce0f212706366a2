package tracechunk

import "encoding/binary"

// Version is the first byte of every trace_chunks.packed value.
const Version = 1

// StatusError is OTLP's STATUS_CODE_ERROR, counted in trace_chunks.errors.
const StatusError = 2

// Encoder packs the spans of one trace at a time (Begin, Add, Append). Its buffers are reused
// across traces and slices; the projector's stager owns one.
type Encoder struct {
	strs  map[string]uint32
	table []byte // string table entries: uvarint len, bytes
	body  []byte
	base  int64
	count uint64
}

// Begin starts a trace whose first span starts at base (Unix nanoseconds).
func (e *Encoder) Begin(base int64) {
	if e.strs == nil {
		e.strs = map[string]uint32{}
	}
	clear(e.strs)
	e.table, e.body = e.table[:0], e.body[:0]
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

// Add packs one span of the trace begun. spanID and parentID are 16-digit lowercase hex (any
// other form packs as 0); attrs "{}" packs as the empty attribute map.
func (e *Encoder) Add(spanID, parentID string, start, end, kind, status int64, service, name, statusMsg, attrs string) {
	b := e.body
	b = binary.BigEndian.AppendUint64(b, hexUint64(spanID))
	b = binary.BigEndian.AppendUint64(b, hexUint64(parentID))
	b = binary.AppendVarint(b, start-e.base)
	b = binary.AppendVarint(b, end-start)
	b = binary.AppendUvarint(b, uint64(kind))
	b = binary.AppendUvarint(b, uint64(status))
	b = binary.AppendUvarint(b, uint64(e.str(service)))
	b = binary.AppendUvarint(b, uint64(e.str(name)))
	b = binary.AppendUvarint(b, uint64(e.str(statusMsg)))
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
	out = binary.AppendVarint(out, e.base)
	out = binary.AppendUvarint(out, e.count)
	out = append(out, e.body...)
	return out
}

// Trim drops buffers grown past 1 MiB, so one huge trace's do not stay in the heap for good;
// the stager calls it after each slice.
func (e *Encoder) Trim() {
	if cap(e.body) > 1<<20 {
		e.body, e.table = nil, nil
	}
}

// hexUint64 parses the 16-digit lowercase hex ids the stager writes; anything else is 0.
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
