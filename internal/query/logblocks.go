package query

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/schema"
)

// logBlocks caches, from the store's log_blocks table, an upper bound on the time of every log
// at or below a given id: the newest time over the blocks (of 1<<schema.LogBlockShift ids) up to
// that id's block. Log ids grow in projection order, so this prefix maximum follows time closely
// when records arrive roughly in time order; it stays a correct bound when they do not.
type logBlocks struct {
	mu   sync.Mutex // serializes refreshes
	snap atomic.Pointer[blockSnap]
}

// blockSnap is one immutable state of the cache.
type blockSnap struct {
	// covered: every log with id <= covered is summarized (summary_state.log_id).
	covered int64
	// prefix[b] is the newest time of any log in blocks 0..b, for the complete blocks only
	// (every id of the block <= covered): those never change, so later snapshots share this
	// backing array and only append to it.
	prefix []int64
	// tail is the newest time of any log with id <= covered.
	tail int64
}

// bound returns an upper bound on time_unix_nano over all logs with id <= id, and false when
// the cache does not cover id (it may hold logs newer than any summary seen).
func (s *blockSnap) bound(id int64) (int64, bool) {
	if id > s.covered {
		return 0, false
	}
	if b := id >> schema.LogBlockShift; b < int64(len(s.prefix)) {
		return s.prefix[b], true
	}
	return s.tail, true
}

// refresh brings the cache up to the store's summaries and returns the new state. It reads
// only the blocks from the first incomplete one on. An error (a database without summaries)
// leaves the cache as it was.
func (lb *logBlocks) refresh(ctx context.Context, db *sql.DB) (*blockSnap, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	old := lb.snap.Load()
	if old == nil {
		old = &blockSnap{tail: math.MinInt64}
	}
	// summary_state first: blocks read afterwards hold at least the logs it covers.
	var covered int64
	if err := db.QueryRowContext(ctx, `SELECT log_id FROM summary_state WHERE id = 1`).Scan(&covered); err != nil {
		return nil, fmt.Errorf("read log summary state: %w", err)
	}
	if covered <= old.covered && lb.snap.Load() != nil {
		return old, nil
	}
	complete := (covered + 1) >> schema.LogBlockShift // blocks 0..complete-1 are complete
	next := &blockSnap{covered: covered, prefix: old.prefix}
	run := int64(math.MinInt64)
	if n := len(old.prefix); n > 0 {
		run = old.prefix[n-1]
	}
	tail := run
	rows, err := db.QueryContext(ctx, `SELECT block, max_time_unix_nano FROM log_blocks WHERE block >= ? AND block <= ? ORDER BY block`,
		len(old.prefix), covered>>schema.LogBlockShift)
	if err != nil {
		return nil, fmt.Errorf("read log blocks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b, t int64
		if err := rows.Scan(&b, &t); err != nil {
			return nil, fmt.Errorf("read log blocks: %w", err)
		}
		if b < complete {
			for int64(len(next.prefix)) < b { // blocks without logs
				next.prefix = append(next.prefix, run)
			}
			run = max(run, t)
			next.prefix = append(next.prefix, run)
		}
		tail = max(tail, run, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read log blocks: %w", err)
	}
	for int64(len(next.prefix)) < complete {
		next.prefix = append(next.prefix, run)
	}
	next.tail = max(tail, run)
	lb.snap.Store(next)
	return next, nil
}

// topK keeps the k greatest (time, id) pairs seen: a min-heap whose root is the k-th best.
type topK struct {
	k     int
	items []logKey
}

type logKey struct{ t, id int64 }

func (a logKey) less(b logKey) bool { return a.t < b.t || a.t == b.t && a.id < b.id }

func (h *topK) full() bool { return len(h.items) == h.k }

// offer adds x if it is among the k greatest so far.
func (h *topK) offer(x logKey) {
	it := h.items
	if len(it) < h.k {
		it = append(it, x)
		for i := len(it) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if !it[i].less(it[p]) {
				break
			}
			it[i], it[p] = it[p], it[i]
			i = p
		}
		h.items = it
		return
	}
	if !it[0].less(x) {
		return
	}
	it[0] = x
	for i := 0; ; { // sift down
		l, m := 2*i+1, i
		if l < len(it) && it[l].less(it[m]) {
			m = l
		}
		if r := l + 1; r < len(it) && it[r].less(it[m]) {
			m = r
		}
		if m == i {
			break
		}
		it[i], it[m] = it[m], it[i]
		i = m
	}
}

// logsByBlocks answers a text search exactly, newest first: it walks the FTS5 candidate groups
// (schema.LogTextShift) by descending id, which the index yields without sorting, reads the rows
// of each that pass every filter, keeps the best limit+1 by (time, id), and stops as soon as
// the blocks bound every unseen (lower) id to a time no newer than the kept k-th best; an
// unseen row with the same time has a lower id, so it sorts after it too. The kept rows are
// then read in full. It returns how many rows it read (a group without a passing row is one).
func (r *Reader) logsByBlocks(ctx context.Context, q *LogQuery, snap *blockSnap, fts ftsFilter, base *sqlWhere,
	textWhere string, textArgs []any, keep func(string) bool) ([]Log, int, error) {
	sel := `SELECT log_text.rowid, l.id, l.time_unix_nano`
	if keep != nil {
		sel += `, l.body`
	}
	// LEFT JOIN: a group whose rows all fail still yields a row (l.id NULL), so the walk
	// checks the bound at every group.
	query := sel + ` FROM log_text LEFT JOIN logs l NOT INDEXED ON ` + groupRows + ` AND (` + base.String() + `) AND (` +
		textWhere + `) WHERE ` + fts.pred + ` ORDER BY log_text.rowid DESC`
	args := append(append(append(make([]any, 0, len(base.args)+len(textArgs)+1), base.args...), textArgs...), fts.arg)
	h := topK{k: q.Limit + 1, items: make([]logKey, 0, q.Limit+1)}
	group := int64(math.MaxInt64)
	walked, err := r.walkCandidates(ctx, query, args, keep, func(g, id, t int64, ok bool) bool {
		if g != group {
			group = g
			// Every row still to come, this one included, is in this group or a lower one.
			b, known := snap.bound((g+1)<<schema.LogTextShift - 1)
			if known && (q.Since != 0 && b < q.Since || h.full() && b <= h.items[0].t) {
				return true
			}
		}
		if ok {
			h.offer(logKey{t, id})
		}
		return false
	})
	if err != nil || len(h.items) == 0 {
		return nil, walked, err
	}
	out, err := r.logsByID(ctx, h.items)
	return out, walked, err
}

// groupRows joins a log_text group to its logs rows.
var groupRows = fmt.Sprintf(`l.id BETWEEN log_text.rowid << %d AND (log_text.rowid << %[1]d) + %d`,
	schema.LogTextShift, 1<<schema.LogTextShift-1)

// walkCandidates streams query's (group, id, time[, body]) rows to visit until it returns true,
// and returns how many rows it read. ok is false for a group's row without a log (id NULL) and
// for a body keep rejects.
func (r *Reader) walkCandidates(ctx context.Context, query string, args []any, keep func(string) bool,
	visit func(group, id, t int64, ok bool) (stop bool)) (int, error) {
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("query logs: %w", err)
	}
	defer rows.Close()
	n := 0
	var g int64
	var id, t sql.NullInt64
	var body sql.RawBytes
	dest := []any{&g, &id, &t}
	if keep != nil {
		dest = append(dest, &body)
	}
	for rows.Next() {
		n++
		if err := rows.Scan(dest...); err != nil {
			return n, fmt.Errorf("scan log: %w", err)
		}
		ok := id.Valid
		if ok && keep != nil {
			ok = keep(string(body))
		}
		if visit(g, id.Int64, t.Int64, ok) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("query logs: %w", err)
	}
	return n, nil
}

// logsByID reads the logs of keys in full, newest first.
func (r *Reader) logsByID(ctx context.Context, keys []logKey) ([]Log, error) {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k.id
	}
	out, err := r.queryLogs(ctx, nil, len(keys), `SELECT `+logCols+` FROM logs l WHERE l.id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",")+`)`, args...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Log) int {
		if c := cmp.Compare(b.TimeUnixNano, a.TimeUnixNano); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}
