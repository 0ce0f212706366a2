package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
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
