package project

import (
	"errors"
	"fmt"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// maxCacheEntries bounds each id cache; a full cache is simply cleared.
const maxCacheEntries = 1 << 16

// inserts are the projector's prepared statements on its connection to telemetry.db (or
// traces.db; conn.go), prepared on its first slice and closed with the projector.
type inserts struct {
	upsertResource, upsertScope, upsertMetric, setHWM, groupBodies *sqlitec.Stmt

	// summaries (summarize)
	upsertLogBlock, upsertPointBlock, upsertServiceCount, countMetrics, logsState, spansState *sqlitec.Stmt
	blocks                                                                                    []logBlock
	pointBlocks                                                                               []pointBlock // writePoints
	services                                                                                  []serviceCount

	totals *sliceTotals // projected_totals and unprojectable (unprojectable.go)
	window *windowStmts // around a huge row's windows (window.go)

	logs, text, spans, events, links, chunks *connBulk
	numbers, hists, exps, summaries          *connBulk
}

// preparer prepares statements on a connection, gathering their errors.
type preparer struct {
	c    *sqlitec.Conn
	errs []error
}

func (pr *preparer) stmt(q string) *sqlitec.Stmt {
	st, err := pr.c.Prepare(q)
	pr.errs = append(pr.errs, err)
	return st
}

// bulk prepares the multi-row inserts into table. OR FAIL, and no value for an INTEGER PRIMARY
// KEY (prepareLogsMetrics): a multi-row INSERT that may ABORT keeps a statement journal, a copy
// of every page it dirties, to undo its own rows. FAIL stops at the failing row with the same
// error and undoes nothing, which costs nothing here: commitStage rolls the whole transaction
// back on any error.
func (pr *preparer) bulk(table string, cols ...string) *connBulk {
	b, err := newConnBulk(pr.c, "INSERT OR FAIL INTO", table, cols...)
	pr.errs = append(pr.errs, err)
	return b
}

// newInserts prepares the statements of the tables in ps (the others stay nil).
func newInserts(c *sqlitec.Conn, ps schema.Parts) (*inserts, error) {
	ins := &inserts{}
	pr := &preparer{c: c}
	ins.upsertResource = pr.stmt(`INSERT INTO resources(hash, service_name, schema_url, attributes) VALUES (?,?,?,?)
		ON CONFLICT(hash) DO UPDATE SET hash = excluded.hash RETURNING id`)
	ins.upsertScope = pr.stmt(`INSERT INTO scopes(hash, name, version, schema_url, attributes) VALUES (?,?,?,?,?)
		ON CONFLICT(hash) DO UPDATE SET hash = excluded.hash RETURNING id`)
	ins.setHWM = pr.stmt(`UPDATE projection_state SET raw_id = ? WHERE id = 1`)
	ins.totals = newSliceTotals(c, &pr.errs)
	ins.window = newWindowStmts(c, &pr.errs)
	ins.upsertServiceCount = pr.stmt(`INSERT INTO service_counts(service, signal, records, last_seen_unix_nano) VALUES (?,?,?,?)
		ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records,
			last_seen_unix_nano = max(last_seen_unix_nano, excluded.last_seen_unix_nano)`)
	if ps&schema.LogsMetrics != 0 {
		ins.prepareLogsMetrics(pr)
	}
	if ps&schema.Traces != 0 {
		ins.spansState = pr.stmt(`UPDATE summary_state SET span_id = max(span_id, ?) WHERE id = 1`)
		ins.spans = pr.bulk("spans", "raw_id", "resource_id", "scope_id", "service", "trace_id", "span_id", "parent_span_id",
			"trace_state", "name", "kind", "start_time_unix_nano", "end_time_unix_nano", "duration_nano", "status_code",
			"status_message", "attributes", "flags", "dropped_attributes", "dropped_events", "dropped_links")
		ins.chunks = pr.bulk("trace_chunks", "trace_id", "first_span_id", "last_span_id", "span_count", "errors", "packed")
		ins.events = pr.bulk("span_events", "span_row_id", "time_unix_nano", "name", "attributes", "dropped_attributes")
		ins.links = pr.bulk("span_links", "span_row_id", "trace_id", "span_id", "trace_state", "attributes", "flags", "dropped_attributes")
	}
	if err := errors.Join(pr.errs...); err != nil {
		ins.close()
		return nil, err
	}
	return ins, nil
}

// prepareLogsMetrics prepares the statements of the logs and metrics tables and their summaries.
func (ins *inserts) prepareLogsMetrics(pr *preparer) {
	ins.upsertLogBlock = pr.stmt(`INSERT INTO log_blocks(block, min_time_unix_nano, max_time_unix_nano, logs) VALUES (?,?,?,?)
		ON CONFLICT(block) DO UPDATE SET
			min_time_unix_nano = min(min_time_unix_nano, excluded.min_time_unix_nano),
			max_time_unix_nano = max(max_time_unix_nano, excluded.max_time_unix_nano),
			logs = logs + excluded.logs`)
	ins.upsertPointBlock = pr.stmt(`INSERT INTO point_blocks(point_table, block, min_time_unix_nano, max_time_unix_nano, points)
		VALUES (?,?,?,?,?) ON CONFLICT(point_table, block) DO UPDATE SET
			min_time_unix_nano = min(min_time_unix_nano, excluded.min_time_unix_nano),
			max_time_unix_nano = max(max_time_unix_nano, excluded.max_time_unix_nano),
			points = points + excluded.points`)
	// New metrics rows are new series, a handful a slice at most: counted in SQL.
	ins.countMetrics = pr.stmt(`INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
		SELECT coalesce(service, ''), 'metrics', count(*), 0 FROM metrics
		WHERE id > (SELECT metric_id FROM summary_state WHERE id = 1) GROUP BY 1
		ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records`)
	ins.logsState = pr.stmt(`UPDATE summary_state SET log_id = max(log_id, ?),
		metric_id = coalesce((SELECT max(id) FROM metrics), metric_id) WHERE id = 1`)
	ins.upsertMetric = pr.stmt(`INSERT INTO metrics(hash, resource_id, scope_id, service, name, description, unit, type, temporality, monotonic)
		VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(hash) DO UPDATE SET hash = excluded.hash RETURNING id`)
	// logs and spans rows take the rowid SQLite gives them, the largest one plus one, which is
	// the id the projector assigned (nextLogID, nextSpanID: max(id) + 1 at load, then counted)
	// and referenced (log_text groups, span events and links); checkRowids verifies it. An
	// INSERT that names an INTEGER PRIMARY KEY's value may abort (a datatype mismatch) whatever
	// its conflict clause, and so keeps the statement journal.
	ins.logs = pr.bulk("logs", "raw_id", "resource_id", "scope_id", "service", "time_unix_nano", "observed_time_unix_nano",
		"severity_number", "severity_text", "body", "attributes", "trace_id", "span_id", "flags", "event_name")
	ins.text = newTextInsert(pr.c, &pr.errs)
	ins.groupBodies = pr.stmt(groupBodiesSQL)
	ins.numbers = pr.bulk("number_points", "metric_id", "raw_id", "time_unix_nano", "start_time_unix_nano", "attributes",
		"value_int", "value_double", "flags", "block")
	ins.hists = pr.bulk("histogram_points", "metric_id", "raw_id", "time_unix_nano", "start_time_unix_nano", "attributes",
		"count", "sum", "min", "max", "bucket_counts", "explicit_bounds", "flags", "block")
	ins.exps = pr.bulk("exp_histogram_points", "metric_id", "raw_id", "time_unix_nano", "start_time_unix_nano", "attributes",
		"count", "sum", "min", "max", "scale", "zero_count", "zero_threshold", "positive_offset", "positive_buckets",
		"negative_offset", "negative_buckets", "flags", "block")
	ins.summaries = pr.bulk("summary_points", "metric_id", "raw_id", "time_unix_nano", "start_time_unix_nano", "attributes",
		"count", "sum", "quantiles", "flags", "block")
}

func (ins *inserts) bulks() []*connBulk {
	return []*connBulk{ins.logs, ins.text, ins.spans, ins.chunks, ins.events, ins.links, ins.numbers, ins.hists, ins.exps, ins.summaries}
}

func (ins *inserts) reset() {
	if ins == nil {
		return
	}
	for _, b := range ins.bulks() {
		if b != nil {
			b.reset()
		}
	}
}

func (ins *inserts) close() {
	if ins == nil {
		return
	}
	for _, st := range []*sqlitec.Stmt{ins.upsertResource, ins.upsertScope, ins.upsertMetric, ins.setHWM, ins.groupBodies,
		ins.upsertLogBlock, ins.upsertPointBlock, ins.upsertServiceCount, ins.countMetrics, ins.logsState, ins.spansState} {
		st.Close()
	}
	ins.totals.close()
	ins.window.close()
	for _, b := range ins.bulks() {
		if b != nil {
			b.close()
		}
	}
}

// optText binds s, or NULL for "" (hexID).
func optText(s string) sqlitec.Arg {
	if s == "" {
		return sqlitec.Null()
	}
	return sqlitec.Text(s)
}

// upsertID runs the upsert of an entry missing from cache, which returns its database id, and
// caches the id under hash. The callers look in cache first: the arguments, boxed for the call,
// cost ~12% of the bytes a mixed catch-up allocated when they were built for every entry. (A
// helper taking a func that builds them on a miss would read better, but the slice a func
// returns escapes: one more allocation a miss, +1 alloc a record in BenchmarkProject/metrics.)
func upsertID(cache map[[16]byte]int64, hash [16]byte, st *sqlitec.Stmt, args ...any) (int64, error) {
	id, err := st.QueryInt64(args...)
	if err != nil {
		return 0, err
	}
	if len(cache) >= maxCacheEntries {
		clear(cache)
	}
	cache[hash] = id
	return id, nil
}

// commitStage writes the staged slice and the new high-water mark in one transaction, on the
// projector's connection (conn.go). On error everything is rolled back and the caller resets
// caches.
func (p *projector) commitStage(hwm int64) error {
	return p.d.Conn.Do(func(c *sqlitec.Conn) error {
		if p.ins == nil {
			ins, err := newInserts(c, p.d.Parts)
			if err != nil {
				return diskfull.Classify("prepare projection", err)
			}
			p.ins = ins
		}
		if p.stage.huge != nil { // its windows spill (window.go)
			defer p.ins.window.spill(false)
			if err := p.ins.window.spill(true); err != nil {
				return diskfull.Classify("let the page cache spill", err)
			}
		}
		if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			return diskfull.Classify("begin projection", err)
		}
		if err := p.writeStage(hwm); err != nil {
			_ = c.Exec("ROLLBACK")
			return diskfull.Classify("project", err)
		}
		if err := c.Exec("COMMIT"); err != nil {
			// A COMMIT that fails may leave the transaction open (SQLITE_BUSY does): end it,
			// so the retry can begin another.
			_ = c.Exec("ROLLBACK")
			return diskfull.Classify("commit projection", err)
		}
		return nil
	})
}

func (p *projector) writeStage(hwm int64) error {
	if err := p.writeRows(); err != nil {
		return err
	}
	if err := p.writeWindows(); err != nil {
		return err
	}
	ins := p.ins
	if err := ins.totals.write(p.d.Filter, p.rows, hwm, p.stage.failed); err != nil {
		return err
	}
	if _, err := ins.setHWM.Exec(hwm); err != nil {
		return fmt.Errorf("update projection state: %w", err)
	}
	return nil
}

// writeRows writes the staged rows and adds them to the summaries.
func (p *projector) writeRows() error {
	st, ins := &p.stage, p.ins
	sweep := p.d.Sweep // deleted ids leave the caches first (the store's retention)
	if sweep != nil {
		sweep.Drop(p.resCache, p.scopeCache, p.metricCache)
	}
	resIDs := make([]int64, len(st.Resources))
	for i := range st.Resources {
		r := &st.Resources[i]
		id, ok := p.resCache[r.Hash]
		if !ok {
			var err error
			if id, err = upsertID(p.resCache, r.Hash, ins.upsertResource, r.Hash[:], r.Service, r.SchemaURL, r.Attrs); err != nil {
				return fmt.Errorf("upsert resource: %w", err)
			}
		}
		resIDs[i] = id
	}
	scopeIDs := make([]int64, len(st.Scopes))
	for i := range st.Scopes {
		sc := &st.Scopes[i]
		id, ok := p.scopeCache[sc.Hash]
		if !ok {
			var err error
			if id, err = upsertID(p.scopeCache, sc.Hash, ins.upsertScope, sc.Hash[:], sc.Name, sc.Version, sc.SchemaURL, sc.Attrs); err != nil {
				return fmt.Errorf("upsert scope: %w", err)
			}
		}
		scopeIDs[i] = id
	}
	metricIDs := make([]int64, len(st.Metrics))
	for i := range st.Metrics {
		m := &st.Metrics[i]
		id, ok := p.metricCache[m.Hash]
		if !ok {
			var err error
			if id, err = upsertID(p.metricCache, m.Hash, ins.upsertMetric, m.Hash[:], resIDs[m.Res], scopeIDs[m.Scope],
				st.Resources[m.Res].Service, m.Name, m.Description, m.Unit, m.Typ, m.Temporality, m.Monotonic); err != nil {
				return fmt.Errorf("upsert metric: %w", err)
			}
		}
		metricIDs[i] = id
	}
	if sweep != nil {
		sweep.Use(resIDs, scopeIDs, metricIDs)
	}
	if err := p.writeLogs(resIDs, scopeIDs); err != nil {
		return err
	}
	if err := p.writeSpans(resIDs, scopeIDs); err != nil {
		return err
	}
	if err := p.writeTraceChunks(); err != nil {
		return err
	}
	if err := p.writePoints(metricIDs); err != nil {
		return err
	}
	for _, b := range ins.bulks() {
		if b == nil {
			continue
		}
		if err := b.flush(); err != nil {
			return err
		}
	}
	if err := p.summarize(); err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	return nil
}

func (p *projector) writeLogs(resIDs, scopeIDs []int64) error {
	st, ins := &p.stage, p.ins
	for i := range st.Logs {
		l := &st.Logs[i]
		if err := ins.logs.add(sqlitec.Int(l.RawID), sqlitec.Int(resIDs[l.Res]), sqlitec.Int(scopeIDs[l.Scope]),
			sqlitec.Value(st.Resources[l.Res].Service), sqlitec.Int(l.Time), sqlitec.Int(l.Observed), sqlitec.Int(l.Severity),
			sqlitec.Text(l.SeverityText), sqlitec.Text(l.Body), sqlitec.Text(l.Attrs), optText(l.TraceID),
			optText(l.SpanID), sqlitec.Int(l.Flags), sqlitec.Text(l.Event)); err != nil {
			return fmt.Errorf("insert logs: %w", err)
		}
	}
	if len(st.Logs) == 0 {
		return nil
	}
	if err := ins.logs.flush(); err != nil {
		return fmt.Errorf("insert logs: %w", err)
	}
	if err := checkRowids("logs", ins.logs, st.Logs[len(st.Logs)-1].ID); err != nil {
		return err
	}
	if err := p.text.index(ins, st); err != nil {
		return fmt.Errorf("index log bodies: %w", err)
	}
	return nil
}

func (p *projector) writeSpans(resIDs, scopeIDs []int64) error {
	st, ins := &p.stage, p.ins
	for i := range st.Spans {
		s := &st.Spans[i]
		if err := ins.spans.add(sqlitec.Int(s.RawID), sqlitec.Int(resIDs[s.Res]), sqlitec.Int(scopeIDs[s.Scope]),
			sqlitec.Value(st.Resources[s.Res].Service), optText(s.TraceID), optText(s.SpanID),
			optText(s.Parent), sqlitec.Text(s.TraceState), sqlitec.Text(s.Name), sqlitec.Int(s.Kind),
			sqlitec.Int(s.Start), sqlitec.Int(s.End), sqlitec.Int(s.End-s.Start), sqlitec.Int(s.StatusCode),
			sqlitec.Text(s.StatusMsg), sqlitec.Text(s.Attrs), sqlitec.Int(s.Flags), sqlitec.Int(s.DropAttrs),
			sqlitec.Int(s.DropEv), sqlitec.Int(s.DropLink)); err != nil {
			return fmt.Errorf("insert spans: %w", err)
		}
	}
	if len(st.Spans) > 0 {
		if err := ins.spans.flush(); err != nil {
			return fmt.Errorf("insert spans: %w", err)
		}
		if err := checkRowids("spans", ins.spans, st.Spans[len(st.Spans)-1].ID); err != nil {
			return err
		}
	}
	// Events and links reference spans rows, which must exist first only logically (no foreign
	// key enforcement), so they can be flushed in any order.
	for i := range st.Events {
		e := &st.Events[i]
		if err := ins.events.add(sqlitec.Int(e.SpanRow), sqlitec.Int(e.Time), sqlitec.Text(e.Name), sqlitec.Text(e.Attrs),
			sqlitec.Int(e.Dropped)); err != nil {
			return fmt.Errorf("insert span events: %w", err)
		}
	}
	for i := range st.Links {
		l := &st.Links[i]
		if err := ins.links.add(sqlitec.Int(l.SpanRow), optText(l.TraceID), optText(l.SpanID),
			sqlitec.Text(l.TraceState), sqlitec.Text(l.Attrs), sqlitec.Int(l.Flags), sqlitec.Int(l.Dropped)); err != nil {
			return fmt.Errorf("insert span links: %w", err)
		}
	}
	return nil
}

// writePoints inserts the slice's points. Each row takes the rowid SQLite gives it, the table's
// next one (p.nextPoint: max(rowid) + 1 at load, then counted, as for logs), and stores its
// block (rowid >> schema.PointBlockShift), which the points indexes are keyed by first (schema.sql);
// the blocks' times go to point_blocks (summarize).
func (p *projector) writePoints(metricIDs []int64) error {
	st, ins := &p.stage, p.ins
	ins.pointBlocks = ins.pointBlocks[:0]
	id := p.nextPoint[0]
	for i := range st.Numbers {
		n := &st.Numbers[i]
		b := ins.addPointBlock(0, id, n.Time)
		if err := ins.numbers.add(sqlitec.Int(metricIDs[n.Metric]), sqlitec.Int(n.RawID), sqlitec.Int(n.Time),
			sqlitec.Int(n.Start), sqlitec.Text(n.Attrs), sqlitec.Value(n.Vint), sqlitec.Value(n.Vdouble), sqlitec.Int(n.Flags),
			sqlitec.Int(b)); err != nil {
			return fmt.Errorf("insert number points: %w", err)
		}
		id++
	}
	if err := checkPointRowids(0, ins.numbers, id, p.nextPoint[0]); err != nil {
		return err
	}
	id = p.nextPoint[1]
	for i := range st.Hists {
		h := &st.Hists[i]
		b := ins.addPointBlock(1, id, h.Time)
		if err := ins.hists.add(sqlitec.Int(metricIDs[h.Metric]), sqlitec.Int(h.RawID), sqlitec.Int(h.Time),
			sqlitec.Int(h.Start), sqlitec.Text(h.Attrs), sqlitec.Int(h.Count), sqlitec.Value(h.Sum), sqlitec.Value(h.Min),
			sqlitec.Value(h.Max), sqlitec.Text(h.Buckets), sqlitec.Text(h.Bounds), sqlitec.Int(h.Flags),
			sqlitec.Int(b)); err != nil {
			return fmt.Errorf("insert histogram points: %w", err)
		}
		id++
	}
	if err := checkPointRowids(1, ins.hists, id, p.nextPoint[1]); err != nil {
		return err
	}
	id = p.nextPoint[2]
	for i := range st.Exps {
		e := &st.Exps[i]
		b := ins.addPointBlock(2, id, e.Time)
		if err := ins.exps.add(sqlitec.Int(metricIDs[e.Metric]), sqlitec.Int(e.RawID), sqlitec.Int(e.Time),
			sqlitec.Int(e.Start), sqlitec.Text(e.Attrs), sqlitec.Int(e.Count), sqlitec.Value(e.Sum), sqlitec.Value(e.Min),
			sqlitec.Value(e.Max), sqlitec.Int(e.Scale), sqlitec.Int(e.ZeroCount), sqlitec.Float(e.ZeroThreshold),
			sqlitec.Int(e.PosOffset), sqlitec.Text(e.PosBuckets), sqlitec.Int(e.NegOffset), sqlitec.Text(e.NegBuckets),
			sqlitec.Int(e.Flags), sqlitec.Int(b)); err != nil {
			return fmt.Errorf("insert exponential histogram points: %w", err)
		}
		id++
	}
	if err := checkPointRowids(2, ins.exps, id, p.nextPoint[2]); err != nil {
		return err
	}
	id = p.nextPoint[3]
	for i := range st.Sums {
		s := &st.Sums[i]
		b := ins.addPointBlock(3, id, s.Time)
		if err := ins.summaries.add(sqlitec.Int(metricIDs[s.Metric]), sqlitec.Int(s.RawID), sqlitec.Int(s.Time),
			sqlitec.Int(s.Start), sqlitec.Text(s.Attrs), sqlitec.Int(s.Count), sqlitec.Float(s.Sum), sqlitec.Text(s.Quantiles),
			sqlitec.Int(s.Flags), sqlitec.Int(b)); err != nil {
			return fmt.Errorf("insert summary points: %w", err)
		}
		id++
	}
	return checkPointRowids(3, ins.summaries, id, p.nextPoint[3])
}
