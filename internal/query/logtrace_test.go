package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/schema"
	"go.opentelemetry.io/collector/pdata/plog"
)

// traceQueries filter by one trace of appendDisordered's data, alone and with the other filters.
func traceQueries(base time.Time) map[string]LogQuery {
	tid, _ := hex.DecodeString(blockTraces[1])
	none, _ := hex.DecodeString("00000000000000000000000000000abc")
	return map[string]LogQuery{
		"trace":              {LogFilter: LogFilter{TraceID: tid}, Limit: 40},
		"trace service":      {LogFilter: LogFilter{TraceID: tid, Service: "gamma"}, Limit: 25},
		"trace since until":  {LogFilter: LogFilter{TraceID: tid, Since: base.Add(20 * time.Second).UnixNano(), Until: base.Add(70 * time.Second).UnixNano()}, Limit: 15},
		"trace since (past)": {LogFilter: LogFilter{TraceID: tid, Since: base.Add(-20 * time.Minute).UnixNano()}, Limit: 30},
		"trace until (past)": {LogFilter: LogFilter{TraceID: tid, Until: base.Add(-5 * time.Minute).UnixNano()}, Limit: 10},
		"unknown trace":      {LogFilter: LogFilter{TraceID: none}, Limit: 10},
	}
}

// TestLogsByTrace pages through trace-filtered queries against the brute-force reference, on
// data spread over several log blocks whose times overlap (late logs with old timestamps), so
// narrowing the blocks by time must keep every block that can hold a match.
func TestLogsByTrace(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	appendDisordered(t, st, rand.New(rand.NewPCG(13, 17)), base, 0, 10_000)
	checkPlanAgainstReference(t, st, PlanScan, traceQueries(base))
}

// TestLogsByTraceSeeksIndex checks that every trace query seeks logs_trace_block rather than
// scanning logs or walking another index.
func TestLogsByTraceSeeksIndex(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	appendDisordered(t, st, rand.New(rand.NewPCG(13, 17)), base, 0, 5_000)
	for name, q := range traceQueries(base) {
		for _, c := range []*Cursor{nil, {TimeUnixNano: base.UnixNano(), ID: 4000}} {
			q.Cursor = c
			blocks, err := NewReader(st.ReadDB()).traceBlocks(context.Background(), &q)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) == 0 {
				continue // Logs answers without a query
			}
			base := q.baseWhere(blocks)
			plan := explain(t, st.ReadDB(), scanSQL(&q, base), append(base.args, q.Limit+1)...)
			if !strings.Contains(plan, "SEARCH l USING INDEX logs_trace_block (<expr>=? AND trace_id=?)") {
				t.Errorf("%s (cursor %v): plan does not seek logs_trace_block:\n%s", name, c != nil, plan)
			}
		}
	}
}

// indexNames returns the names of the indexes in db that meet pred (SQL on sqlite_master), sorted.
func indexNames(t testing.TB, db *sql.DB, pred string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND ` + pred + ` ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// explain returns the EXPLAIN QUERY PLAN details of query, one per line.
func explain(t testing.TB, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestLogsByTraceAfterUpgrade turns a database into what version 4 wrote (logs_trace and
// spans_trace indexes on trace_id, trace_chunks without errors), lets Open upgrade it, and checks the indexes and the trace queries over the old
// rows and over rows projected after the upgrade.
func TestLogsByTraceAfterUpgrade(t *testing.T) {
	dir := t.TempDir()
	st := openStoreDir(t, dir)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	rng := rand.New(rand.NewPCG(19, 23))
	appendDisordered(t, st, rng, base, 0, 6_000)
	const errTrace = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	querytest.AppendSpans(t, st,
		spanSpec{Service: "a", TraceID: errTrace, SpanID: "0000000000000001", Name: "root", Start: base, End: base.Add(time.Second)},
		spanSpec{Service: "b", TraceID: errTrace, SpanID: "0000000000000002", ParentID: "0000000000000001", Name: "child",
			Start: base, End: base.Add(time.Second), Err: true})
	querytest.WaitProjected(t, st)
	closeStore(t, st)
	execTelemetry(t, dir, `DROP INDEX logs_trace_block; DROP INDEX spans_trace_block;
		CREATE INDEX logs_trace ON logs(trace_id) WHERE trace_id IS NOT NULL;
		CREATE INDEX spans_trace ON spans(trace_id);
		ALTER TABLE trace_chunks DROP COLUMN errors;
		UPDATE schema_version SET version = 4`)

	st = openStoreDir(t, dir)
	defer closeStore(t, st)
	var version int
	indexes := indexNames(t, st.ReadDB(), `name IN ('logs_trace', 'logs_trace_block', 'spans_trace', 'spans_trace_block')`)
	if err := st.ReadDB().QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if want := []string{"logs_trace_block", "spans_trace_block"}; !slices.Equal(indexes, want) || version != schema.Version {
		t.Fatalf("after the upgrade: trace indexes %v, version %d; want %v, %d", indexes, version, want, schema.Version)
	}
	// The chunks written before the upgrade have no errors count; the filter reads their spans.
	var nulls int
	if err := st.ReadDB().QueryRow(`SELECT count(*) FROM trace_chunks WHERE errors IS NULL`).Scan(&nulls); err != nil || nulls != 1 {
		t.Fatalf("after the upgrade: %d chunks without an errors count (%v), want 1", nulls, err)
	}
	yes := true
	if list, err := NewReader(st.ReadDB()).Traces(context.Background(), TraceQuery{Limit: 10, Error: &yes}); err != nil ||
		len(list) != 1 || list[0].TraceID != errTrace || list[0].SpanCount != 2 {
		t.Errorf("error traces after the upgrade: %v (%v), want %s with 2 spans", list, err, errTrace)
	}
	checkPlanAgainstReference(t, st, PlanScan, traceQueries(base))
	appendDisordered(t, st, rng, base, 6_000, 3_000)
	checkPlanAgainstReference(t, st, PlanScan, traceQueries(base))
}

// BenchmarkLogsByTrace measures a trace's logs looked up by id, on a store of
// OTELBENCH_TRACE_LOGS logs (default 262,144: 64 blocks) of which a quarter carry a random trace
// id, as otelbench load sends them, and one trace has ~20 logs spread over the whole range. The
// lookup seeks logs_trace_block once per block, so its cost grows with the blocks:
//
//	OTELBENCH_TRACE_LOGS=1048576 go test -run '^$' -bench LogsByTrace -count 5 ./internal/query
func BenchmarkLogsByTrace(b *testing.B) {
	n := 1 << 18
	if v := os.Getenv("OTELBENCH_TRACE_LOGS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	st := openStoreDir(b, b.TempDir())
	defer closeStore(b, st)
	rng := rand.New(rand.NewPCG(5, 8))
	const spread = "5b8efff798038103d269b633813fc60c"
	base := time.Now().Add(-time.Hour)
	const per = 1000
	spreadLogs := 0
	for i := 0; i < n; i += per {
		logs := make([]querytest.LogSpec, min(per, n-i))
		for j := range logs {
			logs[j] = querytest.LogSpec{Service: "svc", Sev: plog.SeverityNumberInfo, Body: "request served",
				At: base.Add(time.Duration(i+j) * time.Millisecond)}
			switch {
			case (i+j)%(n/20) == 0:
				logs[j].TraceID = spread
				spreadLogs++
			case rng.IntN(4) == 0:
				logs[j].TraceID = fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64()|1)
			}
		}
		querytest.AppendLogs(b, st, logs...)
	}
	querytest.WaitProjected(b, st)
	r := NewReader(st.ReadDB())
	tid, _ := hex.DecodeString(spread)
	q := LogQuery{LogFilter: LogFilter{TraceID: tid}, Limit: 100}
	for b.Loop() {
		p, _, err := r.Logs(context.Background(), q)
		if err != nil || len(p.Logs) != spreadLogs {
			b.Fatalf("%d logs, %v", len(p.Logs), err)
		}
	}
	blocks, err := r.traceBlocks(context.Background(), &q)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(blocks)), "blocks")
}
