package tracechunk

import (
	"encoding/binary"
	"testing"
)

// spanCount returns the span count in a packed chunk's header, or -1 if it has none.
func spanCount(p []byte) int {
	d := decoder{p: p, pos: 1}
	if len(p) == 0 || p[0] != Version {
		return -1
	}
	for range min(d.uvarint(), uint64(len(p))) {
		d.ref(0)
	}
	d.pos += int(16 * min(d.uvarint(), uint64(len(p))))
	if d.pos > len(p) {
		return -1
	}
	d.varint()
	c := d.uvarint()
	if d.bad || c > uint64(len(p)) {
		return -1
	}
	return int(c)
}

// FuzzDecode: Decode never panics or reads out of bounds, and a chunk it accepts yields
// strings and resources inside the chunk.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{Version, 0, 0, 0, 0})
	one := []byte{Version, 1, 3, 'a', 'b', 'c', 1}
	one = append(one, make([]byte, 16)...)
	one = append(one, 2, 1)
	one = binary.BigEndian.AppendUint64(one, 7)
	one = binary.BigEndian.AppendUint64(one, 0)
	one = append(one, 2, 4, 1, 2, 1, 1, 0, 0, 2, '{', '}')
	f.Add(one)
	f.Add([]byte{Version, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := max(spanCount(b), 0)
		got, err := decodeAll(b, n, 3)
		if err != nil {
			return
		}
		if len(got) != n {
			t.Errorf("decoded %d spans, header says %d", len(got), n)
		}
	})
}
