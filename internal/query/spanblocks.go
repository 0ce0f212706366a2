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
// first_span_id..last_span_id ranges hold all its spans). The queries below list the blocks
// with recursive CTEs and join them to spans under CROSS JOIN (blocks first) and INDEXED BY, so
// SQLite cannot pick another plan: with the blocks as "IN (SELECT ...)" it scans the whole
// index.

// traceBlocksCTE starts a statement's WITH clause with tb(id, x): the blocks x that can hold
// spans of trace id, for the n traces given as the first n parameters. Each (id, x) is listed
// once, so joining spans to tb reads each span once.
func traceBlocksCTE(n int) string {
	return fmt.Sprintf(`WITH RECURSIVE t(id) AS (VALUES %[2]s),
	cr(id, x, hi) AS (SELECT c.trace_id, c.first_span_id >> %[1]d, c.last_span_id >> %[1]d FROM t JOIN trace_chunks c ON c.trace_id = t.id
		UNION SELECT id, x + 1, hi FROM cr WHERE x < hi),
	tb(id, x) AS (SELECT DISTINCT id, x FROM cr)`, schema.SpanBlockShift, strings.TrimSuffix(strings.Repeat("(?),", n), ","))
}

// spansOf joins the blocks (column x) of cte to the spans rows (alias a) in each block that meet
// trace, a condition on a.trace_id that the index can seek (= or IN):
// "FROM tb " + spansOf("tb", "s", "s.trace_id = tb.id").
func spansOf(cte, a, trace string) string {
	return fmt.Sprintf(`CROSS JOIN spans %[1]s INDEXED BY spans_trace_block ON (%[1]s.id >> %[2]d) = %[4]s.x AND %[3]s`,
		a, schema.SpanBlockShift, trace, cte)
}

// chunkBoundsSQL finds the lowest and highest span row id of trace ?1 among its chunks: two
// seeks of trace_chunks' primary key (a later chunk comes from a later slice, so it has the
// higher ids).
const chunkBoundsSQL = `SELECT (SELECT min(first_span_id) FROM trace_chunks WHERE trace_id = ?1),
	(SELECT last_span_id FROM trace_chunks WHERE trace_id = ?1 ORDER BY first_span_id DESC LIMIT 1)`

// traceBounds returns the lowest and highest span row id of trace id (lo invalid: no spans).
func (r *Reader) traceBounds(ctx context.Context, id string) (lo, hi sql.NullInt64, err error) {
	if err := r.db.QueryRowContext(ctx, chunkBoundsSQL, id).Scan(&lo, &hi); err != nil {
		return lo, hi, fmt.Errorf("query trace: %w", err)
	}
	return lo, hi, nil
}

// traceHasError is true when root span r's trace has a span with status ERROR. The trace list
// tests it for each candidate root, so it must not cost a seek per block: it reads the errors
// counts of the trace's trace_chunks (a seek of their primary key).
const traceHasError = `EXISTS (SELECT 1 FROM trace_chunks c WHERE c.trace_id = r.trace_id AND c.errors > 0)`

// tracesSQL lists root spans (alias r) that meet where, newest first, up to a limit (the last
// parameter). where may use traceHasError.
func tracesSQL(where *sqlWhere, schema string) string {
	return `SELECT r.trace_id, coalesce(r.service,''), r.name, r.start_time_unix_nano, r.duration_nano,
		coalesce((SELECT attributes FROM ` + schema + `.resources WHERE id = r.resource_id), '{}')
		FROM spans r WHERE ` + where.String() + ` ORDER BY r.start_time_unix_nano DESC LIMIT ?`
}

// traceAggSQL summarizes the spans of n traces (the parameters): count, error, first start, last
// end, services.
func traceAggSQL(n int) string {
	return traceBlocksCTE(n) + ` SELECT s.trace_id, count(*), max(s.status_code = 2), min(s.start_time_unix_nano),
		max(s.end_time_unix_nano), group_concat(DISTINCT coalesce(s.service,''))
		FROM tb ` + spansOf("tb", "s", "s.trace_id = tb.id") + ` GROUP BY s.trace_id`
}
