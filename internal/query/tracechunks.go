package query

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/otelbench/otelbench/internal/store"
)

// traceFromChunks builds the tree of trace id (span rows lo..hi) from the
// store's packed trace_chunks: a handful of rows instead of one per span.
// ok is false when the database has no chunks for this trace (it predates
// schema version 2, or the trace began before the upgrade): the caller then
// reads the spans rows.
func (r *Reader) traceFromChunks(ctx context.Context, id string, lo, hi int64) (t *TraceTree, ok bool, err error) {
	var start int64
	err = r.db.QueryRowContext(ctx, `SELECT span_id FROM trace_chunks_start WHERE id = 1`).Scan(&start)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err != nil && strings.Contains(err.Error(), "no such table"):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("query trace chunks: %w", err)
	case lo < start:
		return nil, false, nil
	}
	rows, err := r.db.QueryContext(ctx, `SELECT packed FROM trace_chunks
		WHERE trace_id = ? AND first_span_id BETWEEN ? AND ? ORDER BY first_span_id`, id, lo, hi)
	if err != nil {
		return nil, false, fmt.Errorf("query trace chunks: %w", err)
	}
	defer rows.Close()
	// Each chunk is copied once into a string; the spans' strings are
	// substrings of it.
	var packed []string
	total := 0
	for rows.Next() {
		var raw sql.RawBytes
		if err := rows.Scan(&raw); err != nil {
			return nil, false, fmt.Errorf("scan trace chunk: %w", err)
		}
		p := string(raw)
		packed = append(packed, p)
		total += store.TraceChunkSpans(p)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("query trace chunks: %w", err)
	}
	rows.Close()
	if total == 0 {
		return nil, false, nil
	}
	// Decode into compact columns first; the 150-byte Spans are written
	// once, directly in pre-order, by buildTreeColumns.
	c := spanColumns{
		ids:     make([]uint64, 0, total),
		parents: make([]uint64, 0, total),
		start:   make([]int64, 0, total),
		end:     make([]int64, 0, total),
		text:    make([]spanText, 0, total),
	}
	c.packed = packed
	for i, p := range packed {
		base := uintptr(unsafe.Pointer(unsafe.StringData(p)))
		bad := false
		// ref locates s in chunk p (the decoder returns substrings of it).
		ref := func(s string) strRef {
			if len(s) == 0 {
				return strRef{}
			}
			off := uintptr(unsafe.Pointer(unsafe.StringData(s))) - base
			if off > uintptr(len(p)) || uintptr(len(s)) > uintptr(len(p))-off {
				bad = true
				return strRef{}
			}
			return strRef{uint32(off), uint32(len(s))}
		}
		err := store.DecodeTraceChunk(p, func(ps *store.PackedSpan) {
			c.ids = append(c.ids, ps.SpanID)
			c.parents = append(c.parents, ps.ParentID)
			c.start = append(c.start, ps.Start)
			c.end = append(c.end, ps.End)
			c.text = append(c.text, spanText{chunk: int32(i), kind: ps.Kind, status: ps.Status,
				str: [4]strRef{ref(ps.Service), ref(ps.Name), ref(ps.StatusMessage), ref(ps.Attributes)}})
		})
		if err == nil && bad {
			err = store.ErrBadTraceChunk
		}
		if err != nil {
			return nil, false, fmt.Errorf("trace %s chunk %d: %w", id, i, err)
		}
	}
	if len(c.ids) != total {
		return nil, false, fmt.Errorf("trace %s: %w", id, store.ErrBadTraceChunk)
	}
	// All span and parent ids as hex in one buffer, sliced per span; it is
	// complete and never written again, so it is viewed as a string.
	hexBuf := make([]byte, 32*total)
	for i := range total {
		putHex64(hexBuf[32*i:32*i+16], c.ids[i])
		putHex64(hexBuf[32*i+16:32*i+32], c.parents[i])
	}
	c.hex = unsafe.String(unsafe.SliceData(hexBuf), len(hexBuf))
	return buildTreeColumns(id, &c, parentIndexes(c.ids, c.parents)), true, nil
}

// spanColumns is a decoded trace before its Spans exist: one entry per
// span in spans.id order.
type spanColumns struct {
	ids, parents []uint64
	start, end   []int64
	text         []spanText
	hex          string   // 32 hex digits per span: span id, parent id
	packed       []string // the chunks, which the spans' strings point into
}

// spanText holds a span's small fields and where its strings lie in its
// chunk: no pointers, so the column costs the GC nothing to scan.
type spanText struct {
	chunk, kind, status int32
	str                 [4]strRef // service, name, status message, attributes
}

type strRef struct{ off, n uint32 }

const (
	strService = iota
	strName
	strStatusMessage
	strAttributes
)

// str returns string k of span i.
func (c *spanColumns) str(i int32, k int) string {
	tx := &c.text[i]
	r := tx.str[k]
	return c.packed[tx.chunk][r.off : r.off+r.n]
}

// buildTreeColumns is buildTree on spanColumns: the order is computed on
// the compact columns and each Span is materialised once, in pre-order.
func buildTreeColumns(traceID string, c *spanColumns, parent []int32) *TraceTree {
	n := len(c.ids)
	t := &TraceTree{TraceID: traceID, SpanCount: n}
	childCount := make([]int32, n+1)
	services := map[string]struct{}{}
	// A service is one string-table entry of a chunk: (chunk, offset)
	// identifies it without comparing or hashing the text.
	var seen []uint64
	t.StartTimeUnixNano, t.EndTimeUnixNano = c.start[0], c.end[0]
	for i := range n {
		p := parent[i]
		if p == orphan {
			p = -1
			parent[i] = -1
			t.Orphans++
		}
		childCount[p+1]++
		tx := &c.text[i]
		if key := uint64(tx.chunk)<<32 | uint64(tx.str[strService].off); !slices.Contains(seen, key) {
			if len(seen) < 64 {
				seen = append(seen, key)
			}
			services[c.str(int32(i), strService)] = struct{}{}
		}
		t.StartTimeUnixNano = min(t.StartTimeUnixNano, c.start[i])
		t.EndTimeUnixNano = max(t.EndTimeUnixNano, c.end[i])
		t.Error = t.Error || tx.status == StatusError
	}
	t.DurationNano = t.EndTimeUnixNano - t.StartTimeUnixNano
	// Children in CSR form by counting sort: slot 0 holds the roots.
	off := make([]int32, n+2)
	for i := 0; i <= n; i++ {
		off[i+1] = off[i] + childCount[i]
	}
	kids := make([]int32, n)
	fill := slices.Clone(off[:n+1])
	for i := range n {
		k := parent[i] + 1
		kids[fill[k]] = int32(i)
		fill[k]++
	}
	start := c.start
	for k := 0; k <= n; k++ {
		ck := kids[off[k]:off[k+1]]
		// Kids are in index order; most lists are already sorted by start.
		sorted := true
		for j := 1; j < len(ck); j++ {
			if start[ck[j]] < start[ck[j-1]] {
				sorted = false
				break
			}
		}
		if !sorted {
			slices.SortFunc(ck, func(a, b int32) int {
				return cmp.Or(cmp.Compare(start[a], start[b]), cmp.Compare(a, b))
			})
		}
	}
	spans := make([]Span, n)
	newIdx := make([]int32, n)
	for i := range newIdx {
		newIdx[i] = -1 // unvisited
	}
	next := 0
	type frame struct{ span, depth int32 }
	stack := make([]frame, 0, 64)
	visit := func(rootKids []int32) {
		for j := len(rootKids) - 1; j >= 0; j-- {
			stack = append(stack, frame{rootKids[j], 0})
		}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			i := f.span
			if newIdx[i] >= 0 {
				continue
			}
			tx := &c.text[i]
			s := &spans[next]
			p := c.packed[tx.chunk]
			str := func(k int) string { r := tx.str[k]; return p[r.off : r.off+r.n] }
			*s = Span{SpanID: c.hex[32*i : 32*i+16], Parent: -1, Depth: int(f.depth),
				Children: int(childCount[i+1]), Service: str(strService), Name: str(strName),
				Kind: tx.kind, StartTimeUnixNano: c.start[i], EndTimeUnixNano: c.end[i],
				StatusCode: tx.status, StatusMessage: str(strStatusMessage),
				Attributes: RawJSON(str(strAttributes))}
			if c.parents[i] != 0 {
				s.ParentSpanID = c.hex[32*i+16 : 32*i+32]
			}
			if p := parent[i]; p >= 0 && newIdx[p] >= 0 {
				s.Parent = int(newIdx[p])
			} else {
				t.Roots = append(t.Roots, next)
			}
			t.MaxDepth = max(t.MaxDepth, s.Depth)
			newIdx[i] = int32(next)
			next++
			ck := kids[off[i+1]:off[i+2]]
			for j := len(ck) - 1; j >= 0; j-- {
				stack = append(stack, frame{ck[j], f.depth + 1})
			}
		}
	}
	visit(kids[off[0]:off[1]])
	for i := range n {
		if newIdx[i] < 0 {
			visit([]int32{int32(i)})
		}
	}
	t.Spans = spans
	for s := range services {
		t.Services = append(t.Services, s)
	}
	slices.Sort(t.Services)
	return t
}

// parentIndexes maps each span's parent id to the parent's position: -1 for
// a root (id 0), orphan when the parent is absent or the span itself. The
// index is an open-addressing table of ids (a Go map of 161,000 uint64s cost
// 3× more), the last of duplicate ids winning as in BuildTree.
func parentIndexes(ids, parents []uint64) []int32 {
	size := 1
	for size < 2*len(ids) {
		size <<= 1
	}
	mask := uint64(size - 1)
	// Only positions are stored (4 bytes a slot, so the table of a large
	// trace stays cache-sized); the key is read back from ids.
	table := make([]int32, size) // position + 1; 0 = empty slot
	slot := func(v uint64) uint64 { return (v * 0x9e3779b97f4a7c15) >> 32 & mask }
	for i, v := range ids {
		h := slot(v)
		for table[h] != 0 && ids[table[h]-1] != v {
			h = (h + 1) & mask
		}
		table[h] = int32(i + 1)
	}
	out := make([]int32, len(ids))
	for i, v := range parents {
		if v == 0 {
			out[i] = -1
			continue
		}
		h := slot(v)
		for table[h] != 0 && ids[table[h]-1] != v {
			h = (h + 1) & mask
		}
		p := table[h] - 1
		if p < 0 || int(p) == i {
			p = orphan
		}
		out[i] = p
	}
	return out
}

// hexPairs holds the two lowercase hex digits of every byte value.
var hexPairs = func() (t [512]byte) {
	const digits = "0123456789abcdef"
	for i := range 256 {
		t[2*i], t[2*i+1] = digits[i>>4], digits[i&0xf]
	}
	return t
}()

// putHex64 writes v as 16 lowercase hex digits into b[:16].
func putHex64(b []byte, v uint64) {
	_ = b[15]
	for i := 14; i >= 0; i -= 2 {
		x := 2 * (v & 0xff)
		b[i], b[i+1] = hexPairs[x], hexPairs[x+1]
		v >>= 8
	}
}
