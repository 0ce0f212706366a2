package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	spans := make([]Span, 0, total)
	ids := make([]uint64, 0, total)
	parents := make([]uint64, 0, total)
	// All span and parent ids as hex in one buffer, sliced per span.
	hexBuf := make([]byte, 0, 32*total)
	for i, p := range packed {
		err := store.DecodeTraceChunk(p, func(ps *store.PackedSpan) {
			s := Span{Service: ps.Service, Name: ps.Name, Kind: ps.Kind, StartTimeUnixNano: ps.Start,
				EndTimeUnixNano: ps.End, StatusCode: ps.Status, StatusMessage: ps.StatusMessage}
			if ps.Attributes != "" {
				s.Attributes = RawJSON(ps.Attributes)
			}
			spans = append(spans, s)
			ids = append(ids, ps.SpanID)
			parents = append(parents, ps.ParentID)
			hexBuf = appendHex64(hexBuf, ps.SpanID)
			hexBuf = appendHex64(hexBuf, ps.ParentID)
		})
		if err != nil {
			return nil, false, fmt.Errorf("trace %s chunk %d: %w", id, i, err)
		}
		packed[i] = ""
	}
	if len(spans) != total || cap(hexBuf) != 32*total {
		return nil, false, fmt.Errorf("trace %s: %w", id, store.ErrBadTraceChunk)
	}
	// hexBuf is complete and never written again: view it as a string.
	hexStr := unsafe.String(unsafe.SliceData(hexBuf), len(hexBuf))
	for i := range spans {
		spans[i].SpanID = hexStr[32*i : 32*i+16]
		if parents[i] != 0 {
			spans[i].ParentSpanID = hexStr[32*i+16 : 32*i+32]
		}
	}
	return buildTree(id, spans, parentIndexes(ids, parents)), true, nil
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
	keys := make([]uint64, size)
	pos := make([]int32, size) // position + 1; 0 = empty slot
	slot := func(v uint64) uint64 { return (v * 0x9e3779b97f4a7c15) >> 32 & mask }
	for i, v := range ids {
		h := slot(v)
		for pos[h] != 0 && keys[h] != v {
			h = (h + 1) & mask
		}
		keys[h], pos[h] = v, int32(i+1)
	}
	out := make([]int32, len(ids))
	for i, v := range parents {
		if v == 0 {
			out[i] = -1
			continue
		}
		h := slot(v)
		for pos[h] != 0 && keys[h] != v {
			h = (h + 1) & mask
		}
		p := pos[h] - 1
		if p < 0 || int(p) == i {
			p = orphan
		}
		out[i] = p
	}
	return out
}

func appendHex64(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	var h [16]byte
	for i := 15; i >= 0; i-- {
		h[i] = digits[v&0xf]
		v >>= 4
	}
	return append(b, h[:]...)
}
