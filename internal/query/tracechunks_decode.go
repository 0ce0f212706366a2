package query

import (
	"encoding/binary"

	"github.com/otelbench/otelbench/internal/tracechunk"
)

// decodeChunkV1 decodes chunk c straight into its spans' places in the
// columns when it is in the store's version 1 layout (the version byte;
// the string table: count, then length-prefixed entries; the base start
// time; the span count; per span the 8-byte big-endian span and parent
// ids, start - base and end - start as zigzag varints, kind, status and
// the string indexes of service, name and status message as uvarints,
// then the length-prefixed attributes). It reads the layout directly
// rather than through tracechunk.DecodeTraceChunk's per-span callback, which
// was a third of a 161,000-span fetch's CPU; handled is false for any
// other version, which decodeChunk then leaves to the store's decoder.
// FuzzDecodeChunkV1 holds the two to the same results.
func (b *traceBufs) decodeChunkV1(c *chunkInfo) (handled bool, err error) {
	p := b.arena[c.off : c.off+c.size]
	if len(p) == 0 || p[0] != 1 {
		return false, nil
	}
	d := byteDecoder{p: p, pos: 1}
	n := d.uvarint()
	if n > uint64(len(p)) {
		return true, tracechunk.ErrBadTraceChunk
	}
	var small [64]strRef
	strs := small[:0]
	if n+1 > uint64(len(small)) {
		strs = make([]strRef, 0, n+1)
	}
	strs = append(strs, strRef{})
	for range n {
		l := d.uvarint()
		if l > uint64(len(p)-d.pos) {
			return true, tracechunk.ErrBadTraceChunk
		}
		r := strRef{}
		if l > 0 {
			r = strRef{uint32(c.off + d.pos), uint32(l)}
		}
		strs = append(strs, r)
		d.pos += int(l)
	}
	base := d.varint()
	count := d.uvarint()
	if d.bad || count != uint64(c.spans) {
		return true, tracechunk.ErrBadTraceChunk
	}
	k, end := c.span, c.span+c.spans
	ids, parents, start, finish, text := b.ids[k:end], b.parents[k:end], b.start[k:end], b.end[k:end], b.text[k:end]
	str := func(i uint64) strRef {
		if i >= uint64(len(strs)) {
			d.bad = true
			return strRef{}
		}
		return strs[i]
	}
	for j := range ids {
		if len(p)-d.pos < 16 {
			return true, tracechunk.ErrBadTraceChunk
		}
		ids[j] = binary.BigEndian.Uint64(p[d.pos:])
		parents[j] = binary.BigEndian.Uint64(p[d.pos+8:])
		d.pos += 16
		s := base + d.varint()
		start[j] = s
		finish[j] = s + d.varint()
		tx := &text[j]
		tx.kind = int32(d.uvarint())
		tx.status = int32(d.uvarint())
		tx.str[strService] = str(d.uvarint())
		tx.str[strName] = str(d.uvarint())
		tx.str[strStatusMessage] = str(d.uvarint())
		l := d.uvarint()
		if l > uint64(len(p)-d.pos) {
			return true, tracechunk.ErrBadTraceChunk
		}
		tx.str[strAttributes] = strRef{}
		if l > 0 {
			tx.str[strAttributes] = strRef{uint32(c.off + d.pos), uint32(l)}
		}
		d.pos += int(l)
		if d.bad {
			return true, tracechunk.ErrBadTraceChunk
		}
	}
	if d.pos != len(p) {
		return true, tracechunk.ErrBadTraceChunk
	}
	return true, nil
}

// byteDecoder reads varints as the store's chunk decoder does: at most 10
// bytes, bits past the 64th dropped, bad on a short or overlong one.
type byteDecoder struct {
	p   []byte
	pos int
	bad bool
}

func (d *byteDecoder) uvarint() uint64 {
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

func (d *byteDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}
