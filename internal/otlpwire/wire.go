package otlpwire

import (
	"encoding/binary"
	"errors"
	"io"
)

// Wire types.
const (
	Varint = 0
	I64    = 1
	Len    = 2
	SGroup = 3
	EGroup = 4
	I32    = 5
)

// RecursionLimit is pdata's proto.RecursionLimit for the AnyValue family
// (AnyValue, ArrayValue, KeyValue, KeyValueList).
const RecursionLimit = 100

// ErrInvalid reports bytes pdata would refuse for a reason other than their
// end: a bad tag, an overlong varint, a negative length, a stray end-group.
var ErrInvalid = errors.New("otlp wire: invalid protobuf")

// ConsumeVarint reads a varint at pos and returns it and the position after it.
func ConsumeVarint(buf []byte, pos int) (uint64, int, error) {
	var num uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, ErrInvalid
		}
		if pos >= len(buf) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		b := buf[pos]
		pos++
		num |= uint64(b&0x7F) << shift
		if b < 0x80 {
			return num, pos, nil
		}
	}
}

// ConsumeTag reads a field tag at pos: its number, its wire type and the position after it.
func ConsumeTag(buf []byte, pos int) (int32, uint8, int, error) {
	tag, pos, err := ConsumeVarint(buf, pos)
	if err != nil {
		return 0, 0, 0, err
	}
	num := int32(tag >> 3)
	if num <= 0 {
		return 0, 0, 0, ErrInvalid
	}
	return num, uint8(tag & 7), pos, nil
}

// ConsumeLen reads a length prefix at pos and returns the length and the position after the
// value it prefixes (the value is buf[end-n:end]).
func ConsumeLen(buf []byte, pos int) (n, end int, err error) {
	num, pos, err := ConsumeVarint(buf, pos)
	if err != nil {
		return 0, 0, err
	}
	length := int(num)
	if length < 0 {
		return 0, 0, ErrInvalid
	}
	pos += length
	if pos < 0 || pos > len(buf) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return length, pos, nil
}

// ConsumeBytes reads a length-delimited value at pos and returns it and the position after it.
func ConsumeBytes(buf []byte, pos int) ([]byte, int, error) {
	n, end, err := ConsumeLen(buf, pos)
	if err != nil {
		return nil, 0, err
	}
	return buf[end-n : end], end, nil
}

// ConsumeFixed64 reads a little-endian 64-bit value at pos.
func ConsumeFixed64(buf []byte, pos int) (uint64, int, error) {
	if pos += 8; pos < 0 || pos > len(buf) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return binary.LittleEndian.Uint64(buf[pos-8:]), pos, nil
}

// ConsumeFixed32 reads a little-endian 32-bit value at pos.
func ConsumeFixed32(buf []byte, pos int) (uint32, int, error) {
	if pos += 4; pos < 0 || pos > len(buf) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return binary.LittleEndian.Uint32(buf[pos-4:]), pos, nil
}

// ConsumeScalar skips a value of wire type wt (varint, I64, I32 or length-delimited) at pos.
func ConsumeScalar(buf []byte, pos int, wt uint8) (int, error) {
	switch wt {
	case Varint:
		_, pos, err := ConsumeVarint(buf, pos)
		return pos, err
	case I64:
		_, pos, err := ConsumeFixed64(buf, pos)
		return pos, err
	case I32:
		_, pos, err := ConsumeFixed32(buf, pos)
		return pos, err
	case Len:
		_, pos, err := ConsumeLen(buf, pos)
		return pos, err
	}
	return 0, ErrInvalid
}

// ConsumeUnknown skips the value of a field this schema does not know, as pdata's
// ConsumeUnknown does (groups included).
func ConsumeUnknown(buf []byte, pos int, wt uint8) (int, error) {
	depth := 0
	for pos < len(buf) {
		switch wt {
		case Varint, I64, Len, I32:
			return ConsumeScalar(buf, pos, wt)
		case SGroup:
			depth++
		case EGroup:
			if depth == 0 {
				return 0, ErrInvalid
			}
			depth--
		default:
			return 0, ErrInvalid
		}
		if depth == 0 {
			return pos, nil
		}
		var err error
		if _, wt, pos, err = ConsumeTag(buf, pos); err != nil {
			return 0, err
		}
	}
	return 0, io.ErrUnexpectedEOF
}

// Zigzag32 decodes a sint32 the way pdata does.
func Zigzag32(num uint64) int32 {
	return int32(uint32(num>>1) ^ uint32(int32((num&1)<<31)>>31))
}
