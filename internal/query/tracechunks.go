package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/otelbench/otelbench/internal/tracechunk"
)

// A trace of at least chunkParallelSpans spans has its chunks read and
// decoded by TraceReaders goroutines, each on its own read connection and
// its own share of the chunks (by span count): SQLite and the decoding are
// the bulk of a fetch, and they split cleanly. The tree is built by one.
// A variable so that tests can split small traces.
var chunkParallelSpans = ParallelSpans

// chunkView reads the trace_chunks of trace id (span rows lo..hi), decodes
// them into compact columns and builds the tree on them: no Span exists.
// ok is false when the trace has no chunks. The view
// holds pooled buffers: the caller must release it. tm, if not nil, gets
// the time spent in SQLite and in decoding (summed over the readers) and
// in building the tree.
func (r *Reader) chunkView(ctx context.Context, id string, lo, hi int64, tm *traceTiming) (v *traceView, ok bool, err error) {
	t0 := time.Now()
	b := getTraceBufs()
	defer func() {
		if v == nil {
			b.release()
		}
	}()
	// The chunks' sizes first (length() does not read a blob), so that
	// every chunk and every span has its place before any is read.
	if err := b.locateChunks(ctx, r.db, id, lo, hi); err != nil {
		return nil, false, err
	}
	if len(b.ids) == 0 {
		return nil, false, nil
	}
	var db, decode time.Duration
	if tm != nil {
		db = time.Since(t0)
	}
	parts := [][2]int{{0, len(b.chunks)}}
	if len(b.ids) >= chunkParallelSpans && len(b.chunks) > 1 {
		parts = b.split(TraceReaders)
	}
	times := make([][2]time.Duration, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	for i, p := range parts[1:] {
		g.Go(func() (err error) {
			times[i+1][0], times[i+1][1], err = b.readChunks(gctx, r.db, id, p[0], p[1])
			return err
		})
	}
	g.Go(func() (err error) { // on this goroutine's share too, in parallel
		times[0][0], times[0][1], err = b.readChunks(gctx, r.db, id, parts[0][0], parts[0][1])
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, false, fmt.Errorf("trace %s: %w", id, err)
	}
	for _, t := range times {
		db, decode = db+t[0], decode+t[1]
	}
	t1 := time.Now()
	resources, err := r.chunkResources(ctx, b)
	if err != nil {
		return nil, false, fmt.Errorf("trace %s: %w", id, err)
	}
	db += time.Since(t1)
	t1 = time.Now()
	v = &traceView{b: b, resources: resources, resJSON: make([][]byte, len(resources))}
	for i, res := range resources {
		if res != "" { // written once per trace, not once per span
			v.resJSON[i] = appendRawJSON([]byte(`,"resource":`), res)
		}
	}
	v.tree.TraceID = id
	b.parentIndexes()
	b.buildTree(&v.tree)
	if tm != nil {
		tm.db += db
		tm.decode += decode
		tm.build += time.Since(t1)
	}
	return v, true, nil
}

// traceTiming splits a trace fetch's server time into its stages.
type traceTiming struct {
	db     time.Duration // SQLite: locating and reading the spans or chunks
	decode time.Duration // chunks into columns (rows: unpacking, counted in db)
	build  time.Duration // the tree
}

// chunkInfo places one trace_chunks row: its first span row id, its bytes
// in the arena and its spans in the columns.
type chunkInfo struct {
	first       int64
	off, size   int
	span, spans int
	res         tracechunk.Ref // the chunk's resource table, once decoded
}

// locateChunks reads the placement of the chunks of trace id (span rows
// lo..hi) into b.chunks and sizes the arena and the columns for them.
func (b *traceBufs) locateChunks(ctx context.Context, db *sql.DB, id string, lo, hi int64) error {
	rows, err := db.QueryContext(ctx, `SELECT first_span_id, span_count, length(packed) FROM trace_chunks
		WHERE trace_id = ? AND first_span_id BETWEEN ? AND ? ORDER BY first_span_id`, id, lo, hi)
	if err != nil {
		return fmt.Errorf("query trace chunks: %w", err)
	}
	defer rows.Close()
	off, span := 0, 0
	b.chunks = b.chunks[:0]
	for rows.Next() {
		c := chunkInfo{off: off, span: span}
		if err := rows.Scan(&c.first, &c.spans, &c.size); err != nil {
			return fmt.Errorf("scan trace chunk: %w", err)
		}
		if c.size <= 0 || c.spans < 0 {
			return fmt.Errorf("trace %s chunk at span %d: %w", id, c.first, tracechunk.ErrBadTraceChunk)
		}
		off += c.size
		span += c.spans
		b.chunks = append(b.chunks, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query trace chunks: %w", err)
	}
	if off > math.MaxUint32 { // tracechunk.Ref offsets are 32-bit
		return fmt.Errorf("trace %s: %d bytes of chunks: too big", id, off)
	}
	b.arena = grow(b.arena, off)
	b.ids = grow(b.ids, span)
	b.parents = grow(b.parents, span)
	b.start = grow(b.start, span)
	b.end = grow(b.end, span)
	b.text = grow(b.text, span)
	return nil
}

// split divides b.chunks into at most n runs of about equal span counts.
func (b *traceBufs) split(n int) [][2]int {
	total := len(b.ids)
	var parts [][2]int
	from := 0
	for i := range b.chunks {
		if len(parts) < n-1 && b.chunks[i].span+b.chunks[i].spans >= total*(len(parts)+1)/n {
			parts = append(parts, [2]int{from, i + 1})
			from = i + 1
		}
	}
	if from < len(b.chunks) {
		parts = append(parts, [2]int{from, len(b.chunks)})
	}
	return parts
}

// readChunks reads chunks [from, to) of b.chunks into their places in the
// arena and decodes each into its spans' places in the columns. It
// returns the time spent in SQLite and in decoding.
func (b *traceBufs) readChunks(ctx context.Context, db *sql.DB, id string, from, to int) (inDB, inDecode time.Duration, err error) {
	t0 := time.Now()
	rows, err := db.QueryContext(ctx, `SELECT packed FROM trace_chunks
		WHERE trace_id = ? AND first_span_id BETWEEN ? AND ? ORDER BY first_span_id`, id, b.chunks[from].first, b.chunks[to-1].first)
	if err != nil {
		return 0, 0, fmt.Errorf("query trace chunks: %w", err)
	}
	defer rows.Close()
	i := from
	// Each chunk is copied once, into its place in the arena, while its
	// row is live; the spans' strings are offsets into the arena.
	var raw sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&raw); err != nil {
			return 0, 0, fmt.Errorf("scan trace chunk: %w", err)
		}
		if i == to || len(raw) != b.chunks[i].size {
			return 0, 0, errTraceChanged
		}
		c := &b.chunks[i]
		copy(b.arena[c.off:c.off+c.size], raw)
		t1 := time.Now()
		if err := b.decodeChunk(c); err != nil {
			return 0, 0, fmt.Errorf("chunk at span %d: %w", c.first, err)
		}
		inDecode += time.Since(t1)
		i++
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("query trace chunks: %w", err)
	}
	if i != to {
		return 0, 0, errTraceChanged
	}
	return time.Since(t0) - inDecode, inDecode, nil
}

// errTraceChanged: a trace's chunks changed between locating and reading
// them (pruned meanwhile).
var errTraceChanged = errors.New("trace chunks changed while read; retry")

// decodeChunk decodes chunk c (in the arena) into its spans' places and notes where its
// resource table lies.
func (b *traceBufs) decodeChunk(c *chunkInfo) (err error) {
	k, end := c.span, c.span+c.spans
	c.res, err = tracechunk.Decode(b.arena[c.off:c.off+c.size], uint32(c.off), tracechunk.Columns{
		IDs: b.ids[k:end], Parents: b.parents[k:end], Start: b.start[k:end], End: b.end[k:end], Text: b.text[k:end]})
	return err
}

// The strings of a span's text, by their index in Text.Str.
const (
	strService       = tracechunk.StrService
	strName          = tracechunk.StrName
	strStatusMessage = tracechunk.StrStatusMessage
	strAttributes    = tracechunk.StrAttributes
)

// grow returns s with length n, reusing its array when it is big enough
// (the contents are not cleared).
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, n+n/8)
}

// parentIndexes maps each span's parent id to the parent's position in
// b.parent: -1 for a root (id 0), orphan when the parent is absent or the
// span itself. The index is an open-addressing table of ids (a Go map of
// 161,000 uint64s cost 3× more), the last of duplicate ids winning.
func (b *traceBufs) parentIndexes() {
	ids, parents := b.ids, b.parents
	size := 1
	for size < 2*len(ids) {
		size <<= 1
	}
	mask := uint64(size - 1)
	// Only positions are stored (4 bytes a slot, so the table of a large
	// trace stays cache-sized); the key is read back from ids.
	table := grow(b.table, size) // position + 1; 0 = empty slot
	clear(table)
	b.table = table
	slot := func(v uint64) uint64 { return (v * 0x9e3779b97f4a7c15) >> 32 & mask }
	for i, v := range ids {
		h := slot(v)
		for table[h] != 0 && ids[table[h]-1] != v {
			h = (h + 1) & mask
		}
		table[h] = int32(i + 1)
	}
	out := grow(b.parent, len(ids))
	b.parent = out
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
}
