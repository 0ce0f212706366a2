package query

import (
	"cmp"
	"slices"
	"testing"

	"github.com/otelbench/otelbench/internal/tracechunk"
)

// FuzzDecodeChunkV1: the direct decoder and tracechunk.DecodeTraceChunk agree
// on every input: both fail, or both fill the same columns. The seed
// corpus (testdata/fuzz) holds real chunks written by the store.
func FuzzDecodeChunkV1(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, p []byte) {
		spans := tracechunk.TraceChunkSpans(string(p))
		decode := func(store bool) (*traceBufs, error) {
			b := &traceBufs{arena: append([]byte("prefix"), p...)}
			c := chunkInfo{off: 6, size: len(p), spans: spans}
			b.ids, b.parents = make([]uint64, spans), make([]uint64, spans)
			b.start, b.end, b.text = make([]int64, spans), make([]int64, spans), make([]spanText, spans)
			if store {
				return b, b.decodeChunkStore(&c)
			}
			if handled, err := b.decodeChunkV1(&c); handled || len(p) > 0 && p[0] == 1 {
				return b, err
			}
			return b, b.decodeChunkStore(&c)
		}
		want, wantErr := decode(true)
		got, err := decode(false)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("direct decoder: error %v; store's: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if !slices.Equal(got.ids, want.ids) || !slices.Equal(got.parents, want.parents) ||
			!slices.Equal(got.start, want.start) || !slices.Equal(got.end, want.end) || !slices.Equal(got.text, want.text) {
			t.Errorf("direct decoder's columns differ from the store decoder's:\n got  %v %v %v %v %v\n want %v %v %v %v %v",
				got.ids, got.parents, got.start, got.end, got.text, want.ids, want.parents, want.start, want.end, want.text)
		}
	})
}

// TestSortKidsSmall: the insertion sort orders child lists as
// slices.SortFunc by (start, index) does, ties included.
func TestSortKidsSmall(t *testing.T) {
	start := make([]int64, 200)
	for i := range start {
		start[i] = int64((i * 7919) % 13) // many ties
	}
	for n := 0; n <= smallSort; n++ {
		ck := make([]int32, n)
		for j := range ck {
			ck[j] = int32(j*5 + n) // index order, as buildTree's lists
		}
		want := slices.Clone(ck)
		slices.SortFunc(want, func(a, b int32) int {
			if c := cmp.Compare(start[a], start[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		sortKidsSmall(ck, start)
		if !slices.Equal(ck, want) {
			t.Errorf("n=%d: got %v, want %v", n, ck, want)
		}
	}
}
