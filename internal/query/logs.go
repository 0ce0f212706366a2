package query

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlglob"
	"github.com/otelbench/otelbench/internal/stage"
)

// Reader answers queries from the store's read-only pool. Safe for
// concurrent use.
type Reader struct {
	db     *sql.DB
	traces *traceCache // nil: no cache
	blocks logBlocks   // the log_blocks summary, cached

	// noBlocks makes Logs plan text searches by selectivity as before log_blocks existed (the
	// peer in tests and benchmarks).
	noBlocks bool

	heavy *heavyGate // bounds concurrent trace and series reads
}

// NewReader returns a Reader over db (store.Store.ReadDB()).
func NewReader(db *sql.DB) *Reader { return &Reader{db: db, heavy: newHeavyGate(0, 0)} }

// WithTraceCache makes r keep built trees of traces of 10,000+ spans, up to
// maxSpans spans in all (LRU), revalidated on every fetch by two index
// seeks; a tree returned from it is shared and must not be modified.
// Memory: roughly 250 bytes per cached span.
func (r *Reader) WithTraceCache(maxSpans int) *Reader {
	if maxSpans > 0 {
		r.traces = newTraceCache(maxSpans)
	}
	return r
}

// logCols are the columns queryLogs scans. The resource's attributes are read afterwards for
// the rows returned only (withResources): a plan that walks 50,000 rows to find a page would
// otherwise look up each one's resource.
const logCols = `l.id, l.time_unix_nano, l.observed_time_unix_nano, l.severity_number, l.severity_text,
	l.body, coalesce(l.service,''), coalesce(l.trace_id,''), coalesce(l.span_id,''), l.attributes, l.resource_id`

// sqlWhere accumulates AND-ed predicates with their bound arguments.
type sqlWhere struct {
	preds []string
	args  []any
}

func (w *sqlWhere) add(pred string, args ...any) {
	w.preds = append(w.preds, pred)
	w.args = append(w.args, args...)
}

func (w *sqlWhere) String() string {
	if len(w.preds) == 0 {
		return "1"
	}
	return strings.Join(w.preds, " AND ")
}

// baseWhere holds every filter except the text ones; traceBlocks are the blocks a trace filter
// searches (Reader.traceBlocks).
func (q *LogQuery) baseWhere(traceBlocks []int64) *sqlWhere {
	w := &sqlWhere{}
	if q.Service != "" {
		names := q.services
		if names == nil { // not resolved (Reader.serviceNames): the name itself
			names = []string{q.Service}
		}
		servicePred(w, "l.service", names)
	}
	q.resources.preds(w, "l.resource_id", "l.service", "main", q.Attrs)
	addRecordAttrPreds(w, "l.attributes", q.Attrs)
	if q.SeverityMin > 0 {
		w.add("l.severity_number >= ?", q.SeverityMin)
	}
	if q.TraceID != nil {
		w.add(tracePred(traceBlocks), fmt.Sprintf("%x", q.TraceID))
	}
	if q.Since != 0 {
		w.add("l.time_unix_nano >= ?", q.Since)
	}
	if q.Until != 0 {
		w.add("l.time_unix_nano < ?", q.Until)
	}
	if c := q.Cursor; c != nil {
		// The redundant <= lets SQLite range-scan the time index.
		w.add("l.time_unix_nano <= ? AND (l.time_unix_nano < ? OR l.id < ?)", c.TimeUnixNano, c.TimeUnixNano, c.ID)
	}
	return w
}

// traceBlocks lists the blocks of log ids (log_blocks' rows) that can hold logs of q's trace
// within q's time range and before its cursor. log_blocks has every block with a projected log:
// the projector updates it in each slice's transaction.
func (r *Reader) traceBlocks(ctx context.Context, q *LogQuery) ([]int64, error) {
	preds, args := []string{"1"}, []any{}
	if q.Since != 0 {
		preds, args = append(preds, "max_time_unix_nano >= ?"), append(args, q.Since)
	}
	if q.Until != 0 {
		preds, args = append(preds, "min_time_unix_nano < ?"), append(args, q.Until)
	}
	if c := q.Cursor; c != nil {
		preds, args = append(preds, "min_time_unix_nano <= ?"), append(args, c.TimeUnixNano)
	}
	rows, err := r.db.QueryContext(ctx, `SELECT block FROM log_blocks WHERE `+strings.Join(preds, " AND ")+` ORDER BY block`, args...)
	if err != nil {
		return nil, fmt.Errorf("list log blocks: %w", err)
	}
	defer rows.Close()
	var blocks []int64
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("list log blocks: %w", err)
		}
		blocks = append(blocks, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list log blocks: %w", err)
	}
	return blocks, nil
}

// tracePred is the trace filter in the form that seeks the store's logs_trace_block index
// (id >> LogBlockShift, trace_id) once per block: the blocks are a literal list, because with
// a subquery (IN (SELECT block FROM log_blocks)) SQLite scans the whole index instead.
func tracePred(blocks []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(l.id >> %d) IN (", schema.LogBlockShift)
	for i, block := range blocks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(block, 10))
	}
	b.WriteString(") AND l.trace_id = ?")
	return b.String()
}

// likeContains returns a LIKE pattern matching s anywhere (escape '\').
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// trigramQuery returns the FTS5 query on log_text matching every group that holds all
// trigrams of each of runs (stage.TextQuery: one token per case-folded trigram, ANDed). It is
// "" when no run has 3 characters.
func trigramQuery(runs ...string) string { return stage.TextQuery(runs...) }

// LogPlan names the strategy Logs chose (reported for benchmarks).
type LogPlan string

// Log search strategies.
const (
	PlanScan      LogPlan = "scan"      // no text filter: walk the time index
	PlanBlocks    LogPlan = "blocks"    // text: index candidates by descending id, stopped by log_blocks
	PlanFTS       LogPlan = "fts"       // selective text: all index matches, sorted by time
	PlanWalk      LogPlan = "walk"      // common text: walk the time index, test each body
	PlanWalkThenF LogPlan = "walk+fts"  // walk found too few within its bound; fell back to fts
	PlanFullWalk  LogPlan = "full-walk" // text the index cannot serve (short glob literal)
)

// ftsFilter is the predicate on log_text that yields a superset of a text filter's matches
// (as groups of rows).
type ftsFilter struct{ pred, arg string }

// textMatch matches the log_text groups holding every trigram of the MATCH query q.
func textMatch(q string) ftsFilter { return ftsFilter{"log_text MATCH ?", q} }

// Logs returns one newest-first page of logs matching q.
//
// A substring (q) or trigram-able glob is answered from the FTS5 trigram index by descending
// log id, stopped exactly by the store's log_blocks summary (logsByBlocks): the work is the
// candidates newer, by id, than the page's oldest row plus about one block's worth, whatever
// was ingested since without the term. Without the summaries (a database the store has not
// upgraded) it falls back to planning by selectivity (logsBySelectivity).
func (r *Reader) Logs(ctx context.Context, q LogQuery) (LogPage, LogPlan, error) {
	p, plan, err := r.logs(ctx, q)
	if err == nil {
		err = r.withResources(ctx, p.Logs)
	}
	return p, plan, err
}

// logs is Logs without the resources.
func (r *Reader) logs(ctx context.Context, q LogQuery) (LogPage, LogPlan, error) {
	var blocks []int64
	var err error
	if q.services, err = r.serviceNames(ctx, q.Service); err != nil {
		return LogPage{}, "", err
	}
	if q.resources, err = r.resolveResources(ctx, "main", q.Attrs); err != nil {
		return LogPage{}, "", err
	}
	if q.resources.none() {
		return page(nil, q.Limit), PlanScan, nil // no resource matches
	}
	if q.TraceID != nil {
		if blocks, err = r.traceBlocks(ctx, &q); err != nil {
			return LogPage{}, "", err
		}
	}
	base := q.baseWhere(blocks)
	fetch := q.Limit + 1
	if q.Q == "" && q.Glob == "" {
		if q.TraceID != nil && len(blocks) == 0 {
			return page(nil, q.Limit), PlanScan, nil // no block can hold the trace's logs
		}
		rows, err := r.queryLogs(ctx, nil, fetch, scanSQL(&q, base), append(base.args, fetch)...)
		return page(rows, q.Limit), PlanScan, err
	}
	text := newLogTextFilter(&q)
	textWhere := text.where()
	keep := func(*Log) bool { return true }
	if text.match != nil {
		keep = func(l *Log) bool { return text.match(l.Body) }
	}
	if text.fts.pred == "" {
		rows, err := r.queryLogs(ctx, keep, fetch, `SELECT `+logCols+` FROM logs l WHERE `+base.String()+` AND `+textWhere+
			` ORDER BY l.time_unix_nano DESC, l.id DESC`, append(base.args, text.args...)...)
		return page(rows, q.Limit), PlanFullWalk, err
	}
	if !r.noBlocks {
		if snap, err := r.blocks.refresh(ctx, r.db); err == nil {
			rows, _, err := r.logsByBlocks(ctx, &q, snap, text.fts, base, textWhere, text.args, text.match)
			return page(rows, q.Limit), PlanBlocks, err
		}
	}
	return r.logsBySelectivity(ctx, &q, text.fts, base, textWhere, text.args, keep)
}

// logTextFilter is how a log query's text filters (q and glob) run.
type logTextFilter struct {
	preds []string // checked by SQLite on every candidate row
	args  []any    // the parameters of preds
	// match checks q in Go on the rows SQLite returns when SQLite cannot: its LIKE folds ASCII
	// only, the trigram index and the live tail fold Unicode. For an ASCII term LIKE agrees and
	// rejects rows before they cross database/sql.
	match func(body string) bool
	fts   ftsFilter // the index's superset of the matches; zero when the index cannot help
}

// newLogTextFilter is q's text filter.
func newLogTextFilter(q *LogQuery) logTextFilter {
	var f logTextFilter
	if q.Q != "" {
		if isASCII(q.Q) {
			f.preds = append(f.preds, `l.body LIKE ? ESCAPE '\'`)
			f.args = append(f.args, likeContains(q.Q))
		} else {
			lq := strings.ToLower(q.Q)
			f.match = func(body string) bool { return strings.Contains(strings.ToLower(body), lq) }
		}
	}
	if q.Glob != "" {
		f.preds = append(f.preds, "l.body GLOB ?")
		f.args = append(f.args, q.Glob)
	}
	switch {
	case q.Q != "":
		// The store's index is trigram with detail=none: it cannot match a
		// phrase, and LIKE on it re-reads every candidate's body. An AND of
		// the term's trigrams needs neither: it yields a superset of the
		// matches straight from the doclists, and preds check the
		// exact, escaped pattern only on rows actually returned.
		if tq := trigramQuery(q.Q); tq != "" {
			f.fts = textMatch(tq)
		}
	case q.Glob != "":
		// An unterminated set (SQLite's GLOB then matches nothing) ends the literal runs
		// there: the index still yields a superset.
		if tq := trigramQuery(sqlglob.Compile(q.Glob).LiteralRuns()...); tq != "" {
			f.fts = textMatch(tq)
		}
	}
	return f
}

// where is the SQL conjunction of the filter's predicates, "1" when it has none.
func (f logTextFilter) where() string {
	if len(f.preds) == 0 {
		return "1"
	}
	return strings.Join(f.preds, " AND ")
}

// scanSQL is the query of PlanScan: base's rows newest first, up to a limit (the last
// parameter). A trace's logs are few, so a trace filter always seeks logs_trace_block: without
// statistics SQLite would sometimes walk the time or the service index instead and test every
// row it passes.
func scanSQL(q *LogQuery, base *sqlWhere) string {
	from := "logs l"
	if q.TraceID != nil {
		from = "logs l INDEXED BY logs_trace_block"
	}
	return `SELECT ` + logCols + ` FROM ` + from + ` WHERE ` + base.String() + ` ORDER BY l.time_unix_nano DESC, l.id DESC LIMIT ?`
}

// logsBySelectivity plans a text search by selectivity: the FTS5 trigram index counts matching
// documents up to T = max(1000, 10·limit). Under T (a selective term), all matches are fetched
// by rowid and sorted by time (cost ~ matches). At T or more (a common term), the time index is
// walked newest first and each body tested (expected cost ~ limit·rows/matches), for at most
// WalkBound rows; if that yields too few, the exact index plan answers (cost ~ all matches:
// ~1 s for 160,000 of 3.2M, which is what ingest without the term on top of them causes).
func (r *Reader) logsBySelectivity(ctx context.Context, q *LogQuery, fts ftsFilter, base *sqlWhere,
	textWhere string, textArgs []any, keep func(*Log) bool) (LogPage, LogPlan, error) {
	fetch := q.Limit + 1
	// Counting matches costs a content check per candidate, so the count
	// stops at a small cap: under it the term is selective.
	threshold := max(1000, 10*int64(fetch))
	var matches int64
	if err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM log_text WHERE `+fts.pred+` LIMIT ?)`,
		fts.arg, threshold).Scan(&matches); err != nil {
		return LogPage{}, "", fmt.Errorf("count matches: %w", err)
	}
	ftsQuery := `SELECT ` + logCols + ` FROM log_text CROSS JOIN logs l NOT INDEXED ON ` + groupRows + ` WHERE ` + fts.pred +
		` AND ` + base.String() + ` AND ` + textWhere + ` ORDER BY l.time_unix_nano DESC, l.id DESC`
	ftsArgs := append(append([]any{fts.arg}, base.args...), textArgs...)
	if matches < threshold {
		rows, err := r.queryLogs(ctx, keep, fetch, ftsQuery, ftsArgs...)
		return page(rows, q.Limit), PlanFTS, err
	}
	bound := max(WalkBound, 100*int64(fetch))
	rows, err := r.queryLogs(ctx, keep, fetch, `SELECT * FROM (SELECT `+logCols+` FROM logs l WHERE `+base.String()+
		` ORDER BY l.time_unix_nano DESC, l.id DESC LIMIT ?) l WHERE `+textWhere,
		append(append(base.args, bound), textArgs...)...)
	if err != nil || len(rows) >= fetch {
		return page(rows, q.Limit), PlanWalk, err
	}
	rows, err = r.queryLogs(ctx, keep, fetch, ftsQuery, ftsArgs...)
	return page(rows, q.Limit), PlanWalkThenF, err
}

// WalkBound is the most rows the common-term plan tests before it falls
// back to the exact index plan.
const WalkBound = 50_000

func page(rows []Log, limit int) LogPage {
	p := LogPage{Logs: rows}
	if p.Logs == nil {
		p.Logs = []Log{}
	}
	if len(rows) > limit {
		p.Logs = rows[:limit]
		last := p.Logs[limit-1]
		p.NextCursor = Cursor{TimeUnixNano: last.TimeUnixNano, ID: last.ID}.String()
	}
	return p
}

// queryLogs runs query and returns up to limit rows that keep accepts
// (nil keeps all); it stops reading once it has them, so a streaming plan
// does no more work than that.
func (r *Reader) queryLogs(ctx context.Context, keep func(*Log) bool, limit int, query string, args ...any) ([]Log, error) {
	return r.queryLogsBytes(ctx, keep, limit, math.MaxInt, query, args...)
}

// queryLogsBytes is queryLogs that also stops after the row that brings the
// rows' text (body and attributes) to maxBytes.
func (r *Reader) queryLogsBytes(ctx context.Context, keep func(*Log) bool, limit, maxBytes int, query string, args ...any) ([]Log, error) {
	size := 0
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query logs: %w", err)
	}
	defer rows.Close()
	var out []Log
	for rows.Next() {
		var l Log
		var attrs []byte
		if err := rows.Scan(&l.ID, &l.TimeUnixNano, &l.ObservedTimeUnixNano, &l.SeverityNumber, &l.SeverityText,
			&l.Body, &l.Service, &l.TraceID, &l.SpanID, &attrs, &l.resourceID); err != nil {
			return nil, fmt.Errorf("scan log: %w", err)
		}
		if keep != nil && !keep(&l) {
			continue
		}
		if len(attrs) > 2 { // "{}" is omitted
			l.Attributes = attrs
		}
		out = append(out, l)
		size += len(l.Body) + len(attrs)
		if len(out) >= limit || size >= maxBytes {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query logs: %w", err)
	}
	return out, nil
}

// LogsAfter returns up to limit logs with id > afterID in id order, stopping
// after the one that brings their text to maxBytes (the live tail's source).
func (r *Reader) LogsAfter(ctx context.Context, afterID int64, limit, maxBytes int) ([]Log, error) {
	logs, err := r.queryLogsBytes(ctx, nil, limit, maxBytes, `SELECT `+logCols+` FROM logs l WHERE l.id > ? ORDER BY l.id LIMIT ?`, afterID, limit)
	if err == nil {
		err = r.withResources(ctx, logs)
	}
	return logs, err
}

// MaxLogID returns the newest log id (0 when there are none).
func (r *Reader) MaxLogID(ctx context.Context) (int64, error) {
	var id int64
	if err := r.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM logs`).Scan(&id); err != nil {
		return 0, fmt.Errorf("max log id: %w", err)
	}
	return id, nil
}
