package tracechunk

import (
	"encoding/binary"
	"testing"
)

func FuzzDecodeTraceChunk(f *testing.F) {
	f.Add([]byte{Version, 0, 0, 0})
	one := []byte{Version, 1, 3, 'a', 'b', 'c', 2, 1}
	one = binary.BigEndian.AppendUint64(one, 7)
	one = binary.BigEndian.AppendUint64(one, 0)
	one = append(one, 2, 4, 1, 2, 1, 1, 0, 2, '{', '}')
	f.Add(one)
	f.Add([]byte{Version, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		err := DecodeTraceChunk(string(b), func(*PackedSpan) { n++ })
		if err == nil && n != TraceChunkSpans(string(b)) {
			t.Errorf("decoded %d spans, header says %d", n, TraceChunkSpans(string(b)))
		}
	})
}
