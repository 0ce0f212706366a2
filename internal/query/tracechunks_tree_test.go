package query

import (
	"cmp"
	"slices"
	"testing"
)

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
