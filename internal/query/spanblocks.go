package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/otelbench/otelbench/internal/schema"
)

// The store indexes spans by trace as spans_trace_block (id >> SpanBlockShift, trace_id), so a
// lookup by trace seeks once per block of span ids that can hold the trace's spans. Those blocks
// come from the trace's trace_chunks rows (one per projection slice that had the trace; their
// first_span_id..last_span_id ranges hold all its spans) and, in a database upgraded from
// version 1, from the blocks of the spans older than trace_chunks. The queries below list the
// blocks with recursive CTEs and join them to spans under CROSS JOIN (blocks first) and INDEXED
// BY, so SQLite cannot pick another plan: with the blocks as "IN (SELECT ...)" it scans the
// whole index.

// legacyBlocks defines lb(x): the blocks of the spans that have no trace_chunks (ids below
// trace_chunks_start, written before schema version 2). None in a database created since.
var legacyBlocks = fmt.Sprintf(`lb(x) AS (
	SELECT (SELECT min(id) FROM spans) >> %[1]d WHERE (SELECT min(id) FROM spans) < (SELECT span_id FROM trace_chunks_start)
	UNION ALL SELECT x + 1 FROM lb WHERE x < ((SELECT span_id FROM trace_chunks_start) - 1) >> %[1]d)`, schema.SpanBlockShift)

// legacyBlocksCTE starts a statement's WITH clause with lb.
var legacyBlocksCTE = "WITH RECURSIVE " + legacyBlocks

// traceBlocksCTE starts a statement's WITH clause with tb(id, x): the blocks x that can hold
// spans of trace id, for the n traces given as the first n parameters; with legacy, the blocks
// of the spans older than trace_chunks too. Each (id, x) is listed once, so joining spans to tb
// reads each span once.
func traceBlocksCTE(n int, legacy bool) string {
	tb := `tb(id, x) AS (SELECT DISTINCT id, x FROM cr)` // cr is distinct by (id, x, hi)
	if legacy {
		tb = legacyBlocks + `, tb(id, x) AS (SELECT id, x FROM cr UNION SELECT t.id, lb.x FROM t, lb)`
	}
	return fmt.Sprintf(`WITH RECURSIVE t(id) AS (VALUES %[2]s),
	cr(id, x, hi) AS (SELECT c.trace_id, c.first_span_id >> %[1]d, c.last_span_id >> %[1]d FROM t JOIN trace_chunks c ON c.trace_id = t.id
		UNION SELECT id, x + 1, hi FROM cr WHERE x < hi),
	%[3]s`, schema.SpanBlockShift, strings.TrimSuffix(strings.Repeat("(?),", n), ","), tb)
}

// spanRangeCTE starts a statement's WITH clause with sb(x): the blocks of span ids ?2 to ?3.
var spanRangeCTE = fmt.Sprintf(`WITH RECURSIVE sb(x) AS (SELECT ?2 >> %[1]d
	UNION ALL SELECT x + 1 FROM sb WHERE x < ?3 >> %[1]d)`, schema.SpanBlockShift)

// spansOf joins the blocks (column x) of cte to the spans rows (alias a) in each block that meet
// trace, a condition on a.trace_id that the index can seek (= or IN):
// "FROM sb " + spansOf("sb", "s", "s.trace_id = ?1").
func spansOf(cte, a, trace string) string {
	return fmt.Sprintf(`CROSS JOIN spans %[1]s INDEXED BY spans_trace_block ON (%[1]s.id >> %[2]d) = %[4]s.x AND %[3]s`,
		a, schema.SpanBlockShift, trace, cte)
}

// chunkBoundsSQL finds the lowest and highest span row id of trace ?1 among its chunks: two
// seeks of trace_chunks' primary key (a later chunk comes from a later slice, so it has the
// higher ids).
const chunkBoundsSQL = `SELECT (SELECT min(first_span_id) FROM trace_chunks WHERE trace_id = ?1),
	(SELECT last_span_id FROM trace_chunks WHERE trace_id = ?1 ORDER BY first_span_id DESC LIMIT 1)`

// legacyBoundsSQL finds them among the spans older than trace_chunks: per block, a lone min()
// or max() is one seek of the index (both together would walk every entry of the trace).
var legacyBoundsSQL = fmt.Sprintf(legacyBlocksCTE+`
	SELECT min((SELECT min(id) FROM spans INDEXED BY spans_trace_block WHERE (id >> %[1]d) = lb.x AND trace_id = ?1)),
		max((SELECT max(id) FROM spans INDEXED BY spans_trace_block WHERE (id >> %[1]d) = lb.x AND trace_id = ?1))
	FROM lb`, schema.SpanBlockShift)

// traceBounds returns the lowest and highest span row id of trace id (lo invalid: no spans).
func (r *Reader) traceBounds(ctx context.Context, id string) (lo, hi sql.NullInt64, err error) {
	if err := r.db.QueryRowContext(ctx, chunkBoundsSQL, id).Scan(&lo, &hi); err != nil {
		return lo, hi, fmt.Errorf("query trace: %w", err)
	}
	legacy, err := r.hasLegacySpans(ctx)
	if err != nil || !legacy {
		return lo, hi, err
	}
	var llo, lhi sql.NullInt64
	if err := r.db.QueryRowContext(ctx, legacyBoundsSQL, id).Scan(&llo, &lhi); err != nil {
		return lo, hi, fmt.Errorf("query trace: %w", err)
	}
	if llo.Valid && (!lo.Valid || llo.Int64 < lo.Int64) {
		lo = llo
	}
	if lhi.Valid && (!hi.Valid || lhi.Int64 > hi.Int64) {
		hi = lhi
	}
	return lo, hi, nil
}

// traceHasError is true when root span r's trace has a span with status ERROR. The trace list
// tests it for each candidate root, so it must not cost a seek per block: it reads the errors
// counts of the trace's trace_chunks (a seek of their primary key). A chunk written before
// schema version 5 has no count (NULL): the spans rows in its range are read instead.
const traceHasError = `EXISTS (SELECT 1 FROM trace_chunks c WHERE c.trace_id = r.trace_id AND (c.errors > 0 OR c.errors IS NULL
	AND EXISTS (SELECT 1 FROM spans e WHERE e.id BETWEEN c.first_span_id AND c.last_span_id AND e.trace_id = r.trace_id AND e.status_code = 2)))`

// legacyHasError is traceHasError for the spans older than trace_chunks (below
// trace_chunks_start, written before schema version 2), which it seeks block by block (lb,
// legacyBlocksCTE). Only a database that has such spans needs it.
var legacyHasError = `EXISTS (SELECT 1 FROM lb ` + spansOf("lb", "e", "e.trace_id = r.trace_id") +
	` WHERE e.status_code = 2 AND e.id < (SELECT span_id FROM trace_chunks_start))`

// hasLegacySpans reports whether some spans are older than trace_chunks. The answer never
// changes for a database (trace_chunks_start is set once, spans are never deleted), so the first
// one is kept.
func (r *Reader) hasLegacySpans(ctx context.Context) (bool, error) {
	switch r.legacy.Load() {
	case legacyNone:
		return false, nil
	case legacySome:
		return true, nil
	}
	var legacy, spans bool
	err := r.db.QueryRowContext(ctx, `SELECT coalesce((SELECT min(id) FROM spans) < (SELECT span_id FROM trace_chunks_start), 0),
		EXISTS (SELECT 1 FROM spans)`).Scan(&legacy, &spans)
	switch {
	case err != nil:
		return false, fmt.Errorf("look for spans without chunks: %w", err)
	case legacy:
		r.legacy.Store(legacySome)
	case spans: // all with chunks, and the spans to come get chunks too
		r.legacy.Store(legacyNone)
	}
	return legacy, nil
}

// Reader.legacy: whether the database has spans older than trace_chunks, once known.
const (
	legacyUnknown int32 = iota
	legacyNone
	legacySome
)

// tracesSQL lists root spans (alias r) that meet where, newest first, up to a limit (the last
// parameter). where may use traceHasError and legacyHasError.
func tracesSQL(where *sqlWhere, schema string) string {
	return legacyBlocksCTE + ` SELECT r.trace_id, coalesce(r.service,''), r.name, r.start_time_unix_nano, r.duration_nano,
		coalesce((SELECT attributes FROM ` + schema + `.resources WHERE id = r.resource_id), '{}')
		FROM spans r WHERE ` + where.String() + ` ORDER BY r.start_time_unix_nano DESC LIMIT ?`
}

// traceAggSQL summarizes the spans of n traces (the parameters): count, error, first start, last
// end, services. legacy: the database has spans older than trace_chunks.
func traceAggSQL(n int, legacy bool) string {
	return traceBlocksCTE(n, legacy) + ` SELECT s.trace_id, count(*), max(s.status_code = 2), min(s.start_time_unix_nano),
		max(s.end_time_unix_nano), group_concat(DISTINCT coalesce(s.service,''))
		FROM tb ` + spansOf("tb", "s", "s.trace_id = tb.id") + ` GROUP BY s.trace_id`
}
