package stage_test

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/otelbench/otelbench/internal/stage"
)

// TestPayloadArena: the buffers of one slice never overlap, a payload too big for a chunk gets
// its own, and after reset the same slice fits in the chunks the arena already has.
func TestPayloadArena(t *testing.T) {
	sizes := []int{0, 1, 2500, stage.ArenaChunk / 4, stage.ArenaChunk/4 + 1, 3000, stage.ArenaChunk, 17}
	for range 300 {
		sizes = append(sizes, 100+len(sizes)*37%5000)
	}
	var a stage.ByteArena
	fill := func() [][]byte {
		a.Reset()
		bufs := make([][]byte, len(sizes))
		for i, n := range sizes {
			b := a.Alloc(n)
			if len(b) != 0 || cap(b) != n {
				t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
			}
			bufs[i] = append(b, bytes.Repeat([]byte{byte(i)}, n)...)
		}
		for i, b := range bufs {
			if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, sizes[i])) {
				t.Fatalf("buffer %d (%d bytes) was overwritten", i, sizes[i])
			}
		}
		return bufs
	}
	first := fill()
	chunks := len(a.Chunks)
	var small int
	for _, n := range sizes {
		if n <= stage.ArenaChunk/4 {
			small += n
		}
	}
	if max := (small/(stage.ArenaChunk*3/4) + 1) + 1; chunks > max {
		t.Errorf("%d chunks for %d bytes of small payloads, want at most %d", chunks, small, max)
	}
	inChunk := func(b []byte) bool {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		for _, c := range a.Chunks {
			if start := uintptr(unsafe.Pointer(unsafe.SliceData(c))); at >= start && at < start+uintptr(cap(c)) {
				return true
			}
		}
		return false
	}
	for i, b := range first {
		if n := sizes[i]; n > 0 && (n > stage.ArenaChunk/4) == inChunk(b) {
			t.Errorf("payload %d (%d bytes): in a chunk %v", i, n, inChunk(b))
		}
	}
	fill()
	if len(a.Chunks) != chunks {
		t.Errorf("the same slice again took %d chunks, had %d", len(a.Chunks), chunks)
	}
}
