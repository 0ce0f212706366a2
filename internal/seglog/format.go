package seglog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/otelbench/otelbench/internal/signal"
)

// On-disk format (doc.go has the contract). Every integer is little-endian.
//
// Segment file header, fileHeaderSize bytes: magic "OTBSEG1\n", then the segment's first id (u64).
//
// Record header, headerSize bytes, followed by the payload:
//
//	0  u32 payload length
//	4  u32 CRC-32C (Castagnoli) of bytes 0-3, bytes 8-31 and the payload
//	8  u64 id
//	16 i64 received, Unix nanoseconds
//	24 u32 records in the payload
//	28 u8  signal
//	29 3 bytes reserved, zero
const (
	headerSize     = 32
	fileHeaderSize = 16
	segmentSuffix  = ".seg"
	// maxPayload bounds a record's length field, so a torn or corrupt length cannot make
	// recovery or a reader allocate gigabytes.
	maxPayload = 1 << 30
)

var (
	fileMagic  = [8]byte{'O', 'T', 'B', 'S', 'E', 'G', '1', '\n'}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// header is one record's header, decoded.
type header struct {
	length   uint32
	crc      uint32
	id       int64
	received int64
	records  uint32
	sig      signal.Signal
}

// putHeader encodes e's header with id into b[:headerSize] and returns it with its CRC set.
func putHeader(b []byte, id int64, e *Entry) {
	binary.LittleEndian.PutUint32(b[0:], uint32(len(e.Payload)))
	binary.LittleEndian.PutUint64(b[8:], uint64(id))
	binary.LittleEndian.PutUint64(b[16:], uint64(e.Received))
	binary.LittleEndian.PutUint32(b[24:], uint32(e.Records))
	b[28], b[29], b[30], b[31] = byte(e.Signal), 0, 0, 0
	binary.LittleEndian.PutUint32(b[4:], recordCRC(b[:headerSize], e.Payload))
}

// recordCRC is the checksum of a record whose header (crc field ignored) is hdr.
func recordCRC(hdr, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, hdr[0:4])
	c = crc32.Update(c, castagnoli, hdr[8:headerSize])
	return crc32.Update(c, castagnoli, payload)
}

// parseHeader decodes b[:headerSize]. It checks what can be checked without the payload.
func parseHeader(b []byte) (header, error) {
	h := header{
		length:   binary.LittleEndian.Uint32(b[0:]),
		crc:      binary.LittleEndian.Uint32(b[4:]),
		id:       int64(binary.LittleEndian.Uint64(b[8:])),
		received: int64(binary.LittleEndian.Uint64(b[16:])),
		records:  binary.LittleEndian.Uint32(b[24:]),
		sig:      signal.Signal(b[28]),
	}
	switch {
	case h.length > maxPayload:
		return h, fmt.Errorf("payload length %d over %d", h.length, maxPayload)
	case !h.sig.Valid():
		return h, fmt.Errorf("invalid signal %d", b[28])
	case b[29]|b[30]|b[31] != 0:
		return h, fmt.Errorf("reserved header bytes not zero")
	}
	return h, nil
}

// putFileHeader encodes a segment's file header.
func putFileHeader(b []byte, first int64) {
	copy(b, fileMagic[:])
	binary.LittleEndian.PutUint64(b[8:], uint64(first))
}

// parseFileHeader checks a segment's file header against the first id its name carries.
func parseFileHeader(b []byte, first int64) error {
	if [8]byte(b[:8]) != fileMagic {
		return fmt.Errorf("not a segment file (bad magic %q)", b[:8])
	}
	if got := int64(binary.LittleEndian.Uint64(b[8:])); got != first {
		return fmt.Errorf("file header's first id %d differs from the name's %d", got, first)
	}
	return nil
}

// segmentName is the file name of the segment whose first id is first: zero-padded so that
// names sort as ids do (Kafka's and etcd's convention).
func segmentName(first int64) string {
	return fmt.Sprintf("%020d%s", first, segmentSuffix)
}

// parseSegmentName returns the first id a segment file name carries.
func parseSegmentName(name string) (int64, bool) {
	base, ok := strings.CutSuffix(filepath.Base(name), segmentSuffix)
	if !ok || len(base) != 20 {
		return 0, false
	}
	id, err := strconv.ParseInt(base, 10, 64)
	return id, err == nil && id > 0
}
