package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/stage"
)

var (
	testTraceID = pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	testSpanID  = pcommon.SpanID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x10, 0x11}
	testParent  = pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1}
)

const (
	testTraceHex = "0102030405060708090a0b0c0d0e0f10"
	testSpanHex  = "0a0b0c0d0e0f1011"
)

// makeLogs builds a logs request of n records for service svc; record i has body "<prefix> i".
func makeLogs(svc, prefix string, n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", svc)
	rl.Resource().Attributes().PutStr("host.name", "h1")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("test-scope")
	sl.Scope().SetVersion("1.0")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_500 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.Body().SetStr(fmt.Sprintf("%s %d", prefix, i))
		lr.Attributes().PutInt("i", int64(i))
		lr.Attributes().PutStr("quote", `a "b"`)
		lr.SetTraceID(testTraceID)
		lr.SetSpanID(testSpanID)
	}
	return ld
}

var (
	logsMarshaler   plog.ProtoMarshaler
	logsUnmarshaler plog.ProtoUnmarshaler
)

func appendLogs(t testing.TB, s *Store, ld plog.Logs) {
	t.Helper()
	b, err := logsMarshaler.MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), signal.Logs, b, ld.LogRecordCount()); err != nil {
		t.Fatalf("Append logs: %v", err)
	}
}

func appendTraces(t testing.TB, s *Store, td ptrace.Traces) {
	t.Helper()
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), signal.Traces, b, td.SpanCount()); err != nil {
		t.Fatalf("Append traces: %v", err)
	}
}

func appendMetrics(t testing.TB, s *Store, md pmetric.Metrics) {
	t.Helper()
	var m pmetric.ProtoMarshaler
	b, err := m.MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), signal.Metrics, b, md.DataPointCount()); err != nil {
		t.Fatalf("Append metrics: %v", err)
	}
}

// waitProjected waits until everything committed is projected.
func waitProjected(t testing.TB, s *Store) {
	t.Helper()
	waitFor(t, "projection to catch up", func() bool {
		st := s.Stats()
		return st.ProjectedRawID == st.LastRawID
	})
}

// queryStrings runs q and returns each row's columns formatted with %v.
func queryRows(t testing.TB, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProjectLogs(t *testing.T) {
	s := openTest(t, Config{})
	appendLogs(t, s, makeLogs("checkout", "hello world", 3))
	ld := makeLogs("payments", "charge card", 2)
	// A non-string body is stored as JSON; an empty body as "".
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	lrs.At(0).Body().SetEmptyMap().PutStr("msg", "structured")
	lrs.At(1).Body().SetEmptyBytes() // bytes body (empty)
	lrs.At(1).SetTraceID(pcommon.TraceID{})
	appendLogs(t, s, ld)
	waitProjected(t, s)

	got := queryRows(t, s.ReadDB(), `SELECT l.service, r.service_name, sc.name, sc.version, l.time_unix_nano,
		l.observed_time_unix_nano, l.severity_number, l.severity_text, l.body, l.attributes ->> '$.i',
		l.attributes ->> '$.quote', l.trace_id, l.span_id, l.raw_id
		FROM logs l JOIN resources r ON r.id = l.resource_id JOIN scopes sc ON sc.id = l.scope_id ORDER BY l.id`)
	want := [][]string{
		{"checkout", "checkout", "test-scope", "1.0", "1700000000000000000", "1700000000000000500", "13", "WARN", "hello world 0", "0", `a "b"`, testTraceHex, testSpanHex, "1"},
		{"checkout", "checkout", "test-scope", "1.0", "1700000000000000001", "1700000000000000501", "13", "WARN", "hello world 1", "1", `a "b"`, testTraceHex, testSpanHex, "1"},
		{"checkout", "checkout", "test-scope", "1.0", "1700000000000000002", "1700000000000000502", "13", "WARN", "hello world 2", "2", `a "b"`, testTraceHex, testSpanHex, "1"},
		{"payments", "payments", "test-scope", "1.0", "1700000000000000000", "1700000000000000500", "13", "WARN", `{"msg":"structured"}`, "0", `a "b"`, testTraceHex, testSpanHex, "2"},
		{"payments", "payments", "test-scope", "1.0", "1700000000000000001", "1700000000000000501", "13", "WARN", `""`, "1", `a "b"`, "<nil>", testSpanHex, "2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logs rows (-want +got):\n%s", diff)
	}
	// Resources and scopes are deduplicated: two services, one scope.
	if n := countRows(t, s, "resources"); n != 2 {
		t.Errorf("resources: got %d, want 2", n)
	}
	if n := countRows(t, s, "scopes"); n != 1 {
		t.Errorf("scopes: got %d, want 1", n)
	}
	// The trigram index finds substrings of bodies.
	fts := queryRows(t, s.ReadDB(), `SELECT l.body FROM log_text f CROSS JOIN logs l
		ON l.id BETWEEN f.rowid << 4 AND (f.rowid << 4) + 15
		WHERE log_text MATCH ? AND l.body LIKE '%lo wor%' ORDER BY l.id`, stage.TextQuery("lo wor"))
	if diff := cmp.Diff([][]string{{"hello world 0"}, {"hello world 1"}, {"hello world 2"}}, fts); diff != "" {
		t.Errorf("FTS match (-want +got):\n%s", diff)
	}
	st := s.Stats()
	if st.Logs.RecordsProjected != 5 || st.LagRecords != 0 || st.LagSeconds != 0 {
		t.Errorf("Stats: got projected %d, lag %d records %.3fs; want 5, 0, 0", st.Logs.RecordsProjected, st.LagRecords, st.LagSeconds)
	}
}

func makeTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "frontend")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("tracer")
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(testTraceID)
	root.SetSpanID(testParent)
	root.SetName("GET /")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(1000)
	root.SetEndTimestamp(5000)
	root.Status().SetCode(ptrace.StatusCodeError)
	root.Status().SetMessage("boom")
	root.Attributes().PutStr("http.method", "GET")
	root.TraceState().FromRaw("k=v")
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(2000)
	ev.Attributes().PutStr("exception.type", "E")
	child := ss.Spans().AppendEmpty()
	child.SetTraceID(testTraceID)
	child.SetSpanID(testSpanID)
	child.SetParentSpanID(testParent)
	child.SetName("db")
	child.SetKind(ptrace.SpanKindClient)
	child.SetStartTimestamp(1500)
	child.SetEndTimestamp(2500)
	link := child.Links().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{0xff, 1})
	link.SetSpanID(pcommon.SpanID{0xee, 2})
	link.Attributes().PutBool("sampled", true)
	return td
}

func TestProjectTraces(t *testing.T) {
	s := openTest(t, Config{})
	appendTraces(t, s, makeTraces())
	waitProjected(t, s)
	got := queryRows(t, s.ReadDB(), `SELECT service, trace_id, span_id, parent_span_id, trace_state, name, kind,
		start_time_unix_nano, end_time_unix_nano, duration_nano, status_code, status_message, attributes
		FROM spans ORDER BY id`)
	want := [][]string{
		{"frontend", testTraceHex, "0101010101010101", "<nil>", "k=v", "GET /", "2", "1000", "5000", "4000", "2", "boom", `{"http.method":"GET"}`},
		{"frontend", testTraceHex, testSpanHex, "0101010101010101", "", "db", "3", "1500", "2500", "1000", "0", "", "{}"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	roots := queryRows(t, s.ReadDB(), `SELECT name FROM spans WHERE parent_span_id IS NULL`)
	if diff := cmp.Diff([][]string{{"GET /"}}, roots); diff != "" {
		t.Errorf("root spans (-want +got):\n%s", diff)
	}
	events := queryRows(t, s.ReadDB(), `SELECT s.name, e.name, e.time_unix_nano, e.attributes FROM span_events e JOIN spans s ON s.id = e.span_row_id`)
	if diff := cmp.Diff([][]string{{"GET /", "exception", "2000", `{"exception.type":"E"}`}}, events); diff != "" {
		t.Errorf("span events (-want +got):\n%s", diff)
	}
	links := queryRows(t, s.ReadDB(), `SELECT s.name, l.trace_id, l.span_id, l.attributes FROM span_links l JOIN spans s ON s.id = l.span_row_id`)
	if diff := cmp.Diff([][]string{{"db", "ff010000000000000000000000000000", "ee02000000000000", `{"sampled":true}`}}, links); diff != "" {
		t.Errorf("span links (-want +got):\n%s", diff)
	}
}

// makeMetrics builds one metric of each of the five types.
func makeMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "api")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("meter")

	g := sm.Metrics().AppendEmpty()
	g.SetName("temp")
	g.SetUnit("Cel")
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(100)
	dp.SetDoubleValue(21.5)
	dp.Attributes().PutStr("room", "a")

	sum := sm.Metrics().AppendEmpty()
	sum.SetName("requests")
	sum.SetDescription("served")
	s := sum.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range 2 {
		dp := s.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(50)
		dp.SetTimestamp(pcommon.Timestamp(100 + i))
		dp.SetIntValue(int64(7 + i))
	}

	h := sm.Metrics().AppendEmpty()
	h.SetName("latency")
	hh := h.SetEmptyHistogram()
	hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	hdp := hh.DataPoints().AppendEmpty()
	hdp.SetTimestamp(100)
	hdp.SetCount(6)
	hdp.SetSum(12.5)
	hdp.SetMin(0.5)
	hdp.BucketCounts().FromRaw([]uint64{1, 2, 3})
	hdp.ExplicitBounds().FromRaw([]float64{1, 2.5})

	e := sm.Metrics().AppendEmpty()
	e.SetName("size")
	eh := e.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	edp := eh.DataPoints().AppendEmpty()
	edp.SetTimestamp(100)
	edp.SetCount(10)
	edp.SetScale(3)
	edp.SetZeroCount(1)
	edp.SetZeroThreshold(0.001)
	edp.Positive().SetOffset(-2)
	edp.Positive().BucketCounts().FromRaw([]uint64{4, 5})
	edp.Negative().BucketCounts().FromRaw([]uint64{})

	q := sm.Metrics().AppendEmpty()
	q.SetName("rtt")
	qdp := q.SetEmptySummary().DataPoints().AppendEmpty()
	qdp.SetTimestamp(100)
	qdp.SetCount(3)
	qdp.SetSum(9)
	qv := qdp.QuantileValues().AppendEmpty()
	qv.SetQuantile(0.5)
	qv.SetValue(2)
	qv = qdp.QuantileValues().AppendEmpty()
	qv.SetQuantile(0.99)
	qv.SetValue(4)
	return md
}

func TestProjectMetrics(t *testing.T) {
	s := openTest(t, Config{})
	appendMetrics(t, s, makeMetrics())
	appendMetrics(t, s, makeMetrics()) // same streams again: metrics rows are deduplicated
	waitProjected(t, s)
	db := s.ReadDB()
	tests := []struct {
		name  string
		query string
		want  [][]string
	}{
		{"metrics", `SELECT service, name, description, unit, type, temporality, monotonic FROM metrics ORDER BY id`, [][]string{
			{"api", "temp", "", "Cel", "gauge", "0", "0"},
			{"api", "requests", "served", "", "sum", "2", "1"},
			{"api", "latency", "", "", "histogram", "1", "0"},
			{"api", "size", "", "", "exponential_histogram", "2", "0"},
			{"api", "rtt", "", "", "summary", "0", "0"},
		}},
		{"number points", `SELECT m.name, p.time_unix_nano, p.start_time_unix_nano, p.attributes, p.value_int, p.value_double, p.raw_id
			FROM number_points p JOIN metrics m ON m.id = p.metric_id ORDER BY p.raw_id, p.rowid`, [][]string{
			{"temp", "100", "0", `{"room":"a"}`, "<nil>", "21.5", "1"},
			{"requests", "100", "50", "{}", "7", "<nil>", "1"},
			{"requests", "101", "50", "{}", "8", "<nil>", "1"},
			{"temp", "100", "0", `{"room":"a"}`, "<nil>", "21.5", "2"},
			{"requests", "100", "50", "{}", "7", "<nil>", "2"},
			{"requests", "101", "50", "{}", "8", "<nil>", "2"},
		}},
		{"histogram points", `SELECT m.name, count, sum, min, max, bucket_counts, explicit_bounds FROM histogram_points p
			JOIN metrics m ON m.id = p.metric_id WHERE raw_id = 1`, [][]string{
			{"latency", "6", "12.5", "0.5", "<nil>", "[1,2,3]", "[1,2.5]"},
		}},
		{"exponential histogram points", `SELECT m.name, count, sum, scale, zero_count, zero_threshold, positive_offset,
			positive_buckets, negative_offset, negative_buckets FROM exp_histogram_points p JOIN metrics m ON m.id = p.metric_id
			WHERE raw_id = 1`, [][]string{
			{"size", "10", "<nil>", "3", "1", "0.001", "-2", "[4,5]", "0", "[]"},
		}},
		{"summary points", `SELECT m.name, count, sum, quantiles FROM summary_points p JOIN metrics m ON m.id = p.metric_id
			WHERE raw_id = 1`, [][]string{
			{"rtt", "3", "9", `[{"q":0.5,"v":2},{"q":0.99,"v":4}]`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, queryRows(t, db, tt.query)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if st := s.Stats(); st.Metrics.RecordsProjected != 12 || st.Metrics.Records != 12 {
		t.Errorf("Stats metrics: got %d records, %d projected; want 12, 12", st.Metrics.Records, st.Metrics.RecordsProjected)
	}
}

// textMatches counts the logs whose log_text group matches the MATCH query match and whose
// body is LIKE like.
func textMatches(t *testing.T, s *Store, match, like string) int {
	t.Helper()
	var n int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM log_text f CROSS JOIN logs l
		ON l.id BETWEEN f.rowid << 4 AND (f.rowid << 4) + 15
		WHERE log_text MATCH ? AND l.body LIKE ?`, match, like).Scan(&n); err != nil {
		t.Fatalf("match %s: %v", match, err)
	}
	return n
}

// tracesPathIn returns the database in dir that holds the trace tables (shard.go).
func tracesPathIn(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, TracesFileName)); err == nil {
		return filepath.Join(dir, TracesFileName)
	}
	return filepath.Join(dir, FileName)
}

// failSpanLinks makes every insert into span_links in dir's trace tables fail, from another
// connection (closed with the test), until the caller drops the trigger fail_links on it.
func failSpanLinks(t *testing.T, dir string) *sql.DB {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+tracesPathIn(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if _, err := other.Exec(`CREATE TRIGGER fail_links BEFORE INSERT ON span_links BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	return other
}

// TestProjectionRetriesWithoutDuplicates makes a projection transaction fail part-way (a trigger
// aborts inserts into span_links, after the spans and, in one file, logs rows of the same slice
// were written), then lets it succeed: the retry must leave exactly one copy of every row.
func TestProjectionRetriesWithoutDuplicates(t *testing.T) {
	for _, oneFile := range []bool{false, true} {
		t.Run(layoutName(oneFile), func(t *testing.T) { testProjectionRetriesWithoutDuplicates(t, oneFile) })
	}
}

// layoutName names a test of the one-file or the two-file layout (shard.go).
func layoutName(oneFile bool) string {
	if oneFile {
		return "one-file"
	}
	return "two-files"
}

func testProjectionRetriesWithoutDuplicates(t *testing.T, oneFile bool) {
	// Store the requests with projection off, so the first projection slice holds all three.
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, TracesFile: !oneFile})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "retry me", 4))
	appendTraces(t, s, makeTraces())
	appendMetrics(t, s, makeMetrics())
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := failSpanLinks(t, dir)
	s = openTest(t, Config{Dir: dir, Logger: quietLogger})
	waitFor(t, "a failed projection", func() bool { return s.Stats().ProjectionErrors > 0 })
	rolledBack := []string{"spans", "trace_chunks"}
	if oneFile {
		rolledBack = append(rolledBack, "logs")
	}
	for _, table := range rolledBack {
		if n := countRows(t, s, table); n != 0 {
			t.Fatalf("%s after failed slice: got %d, want 0 (rolled back)", table, n)
		}
	}
	if _, err := other.Exec(`DROP TRIGGER fail_links`); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	// Each projected database keeps the resources of its rows: in two files traces.db has
	// the spans' one.
	resources := map[bool]int{true: 3, false: 2}[oneFile]
	if !oneFile {
		if n := queryRows(t, s.ReadDB(), `SELECT count(*) FROM traces.resources`)[0][0]; n != "1" {
			t.Errorf("traces.resources rows: got %s, want 1", n)
		}
	}
	for table, want := range map[string]int{"logs": 4, "spans": 2, "span_links": 1, "span_events": 1, "number_points": 3,
		"metrics": 5, "resources": resources, "summary_points": 1} {
		if got := countRows(t, s, table); got != want {
			t.Errorf("%s rows: got %d, want %d", table, got, want)
		}
	}
	if got := textMatches(t, s, stage.TextQuery("retry"), "%retry%"); got != 4 {
		t.Errorf("FTS rows: got %d, want 4", got)
	}
	checkIntegrity(t, s)
}

// TestProjectionPrefetchRetries: with a backlog the projector stages the next slice while the
// current one commits. A commit that fails then drops the staged slice (its log and span ids
// were counted from the failed one), and the retry projects every row once, with log and span
// ids that have no gaps.
func TestProjectionPrefetchRetries(t *testing.T) {
	for _, oneFile := range []bool{false, true} {
		t.Run(layoutName(oneFile), func(t *testing.T) { testProjectionPrefetchRetries(t, oneFile) })
	}
}

func testProjectionPrefetchRetries(t *testing.T, oneFile bool) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, TracesFile: !oneFile})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // a traces row, then two logs rows, ...
		if i%2 == 0 {
			appendTraces(t, s, makeTraces())
		}
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("prefetched%d", i), 3))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := failSpanLinks(t, dir)
	// One raw row of a projector's signals per slice: in one file the first traces row fails
	// while the logs row after it is being staged.
	s = openTest(t, Config{Dir: dir, ProjectSlice: 1, Logger: quietLogger})
	waitFor(t, "two failed projections", func() bool { return s.Stats().ProjectionErrors >= 2 })
	if n := countRows(t, s, "spans"); n != 0 {
		t.Fatalf("spans after failed slices: got %d, want 0", n)
	}
	if n := countRows(t, s, "logs"); oneFile && n != 0 {
		t.Fatalf("logs after failed slices: got %d, want 0", n)
	}
	// Only the one-file layout prefetches (project.go).
	if n := s.stats.prefetches.Load(); oneFile && n == 0 {
		t.Fatal("no slice was prefetched while one committed")
	}
	if _, err := other.Exec(`DROP TRIGGER fail_links`); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	for table, want := range map[string]int{"logs": 60, "spans": 20, "span_links": 10} {
		if got := countRows(t, s, table); got != want {
			t.Errorf("%s rows: got %d, want %d", table, got, want)
		}
	}
	var lo, hi, n, dups int
	if err := s.ReadDB().QueryRow(`SELECT min(id), max(id), count(*), count(*) - count(DISTINCT body) FROM logs`).Scan(&lo, &hi, &n, &dups); err != nil {
		t.Fatal(err)
	}
	if lo != 1 || hi != n || dups != 0 {
		t.Errorf("log ids %d..%d for %d rows, %d duplicated bodies; want 1..%d, none", lo, hi, n, dups, n)
	}
	if err := s.ReadDB().QueryRow(`SELECT min(id), max(id), count(*) FROM spans`).Scan(&lo, &hi, &n); err != nil {
		t.Fatal(err)
	}
	if lo != 1 || hi != n {
		t.Errorf("span ids %d..%d for %d rows; want 1..%d", lo, hi, n, n)
	}
	if st := s.Stats(); st.Logs.RecordsProjected != 60 || st.Traces.RecordsProjected != 20 || st.LagRecords != 0 {
		t.Errorf("Stats: %d logs and %d spans projected, lag %d; want 60, 20, 0", st.Logs.RecordsProjected, st.Traces.RecordsProjected, st.LagRecords)
	}
	if got := textMatches(t, s, stage.TextQuery("refet"), "%prefetched%"); got != 60 {
		t.Errorf("indexed bodies: got %d, want 60", got)
	}
	checkIntegrity(t, s)
}

// TestProjectionResumes stores raw rows with projection off, then reopens with projection on:
// the backlog shows as lag, is projected, and a further reopen projects nothing twice.
func TestProjectionResumes(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("batch%d", i), 3))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), Config{Dir: dir, ProjectSlice: 7})
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 90 || st.ProjectionSlices < 5 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 90 in >= 5, lag 0", st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	appendLogs(t, s, makeLogs("svc", "after", 1))
	waitProjected(t, s)
	if n := countRows(t, s, "logs"); n != 91 {
		t.Errorf("logs rows: got %d, want 91", n)
	}
	var dups int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM (SELECT body FROM logs GROUP BY body HAVING count(*) > 1)`).Scan(&dups); err != nil || dups != 0 {
		t.Errorf("duplicated bodies: got %d (%v), want 0", dups, err)
	}
}

func TestProjectedNotify(t *testing.T) {
	s := openTest(t, Config{})
	ch, unsubscribe := s.ProjectedNotify()
	defer unsubscribe()
	appendLogs(t, s, makeLogs("svc", "notify", 1))
	<-ch
	// By either projector: traces.db's passes the logs row by in a slice of its own.
	passed := false
	for i := range s.shards {
		passed = passed || s.stats.projectedRawID[i].Load() == 1
	}
	if !passed {
		t.Errorf("notified before any slice committed")
	}
	unsubscribe()
	if _, ok := <-ch; ok {
		t.Errorf("channel still open after unsubscribe")
	}
}

// TestAttributesJSON checks the JSON encoder against encoding/json for the value types.
func TestAttributesJSON(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("s", "tab\t\"q\" \x01 é \xff")
	m.PutInt("i", -42)
	m.PutDouble("d", 1.5e300)
	m.PutBool("b", true)
	m.PutEmptyBytes("by").FromRaw([]byte{0, 1, 2})
	sl := m.PutEmptySlice("sl")
	sl.AppendEmpty().SetInt(1)
	sl.AppendEmpty().SetStr("x")
	m.PutEmptyMap("m").PutStr("k", "v")
	m.PutEmpty("nil")
	got := stage.AppendJSONMap(nil, m)
	var decoded map[string]any
	if err := json.Unmarshal(got, &decoded); err != nil {
		t.Fatalf("invalid JSON %s: %v", got, err)
	}
	want := map[string]any{
		"s": "tab\t\"q\" \x01 é \ufffd", "i": -42.0, "d": 1.5e300, "b": true, "by": "AAEC",
		"sl": []any{1.0, "x"}, "m": map[string]any{"k": "v"}, "nil": nil,
	}
	if diff := cmp.Diff(want, decoded); diff != "" {
		t.Errorf("decoded JSON (-want +got):\n%s", diff)
	}
}

// TestProjectionSkipsUndecodable stores a payload that is not OTLP protobuf between two good
// ones: projection must pass it by (kept and counted: unprojectable.go) and go on, never stall
// behind it.
func TestProjectionSkipsUndecodable(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	appendLogs(t, s, makeLogs("svc", "before", 1))
	if err := s.Append(context.Background(), signal.Logs, []byte{0xff, 0xff, 0xff}, 1); err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "after", 1))
	waitProjected(t, s)
	got := queryRows(t, s.ReadDB(), `SELECT body FROM logs ORDER BY id`)
	if diff := cmp.Diff([][]string{{"before 0"}, {"after 0"}}, got); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	if st := s.Stats(); st.Logs.RecordsProjected != 2 || st.UnprojectableRecords != 1 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected, %d unprojectable, lag %d; want 2, 1 (the skipped row is no lag, and no projected record), 0",
			st.Logs.RecordsProjected, st.UnprojectableRecords, st.LagRecords)
	}
}

// TestLagVisible checks that a projection backlog shows in Stats, in records and seconds.
func TestLagVisible(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "lag", 4))
	appendLogs(t, s, makeLogs("svc", "lag", 3))
	time.Sleep(5 * time.Millisecond) // let the backlog age (not a timing assertion)
	st := s.Stats()
	if st.LagRecords != 7 || st.LagSeconds <= 0 {
		t.Errorf("Stats with projection off: got lag %d records, %v s; want 7, > 0", st.LagRecords, st.LagSeconds)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The backlog survives a restart and is then projected away.
	s = openTest(t, Config{Dir: dir, NoProjection: true})
	if st := s.Stats(); st.LagRecords != 7 || st.LagSeconds <= 0 || st.ProjectedRawID != 0 || st.LastRawID != 2 {
		t.Errorf("Stats after reopen: got lag %d records, %v s, projected %d of %d; want 7, > 0, 0 of 2",
			st.LagRecords, st.LagSeconds, st.ProjectedRawID, st.LastRawID)
	}
}

// TestProjectionBoundsBigRequests: requests of 1,000 records are projected
// 8 to a slice (maxSliceRecords), and a slice reads only the raw rows it can
// take plus the two that tell it more is pending, not ProjectSlice payloads.
func TestProjectionBoundsBigRequests(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("big%d-", i), 1000))
	}
	p := newProjector(s, s.shards[0])
	if err := p.load(); err != nil {
		t.Fatal(err)
	}
	if err := p.readRaw(&p.rows, nil, p.hwm, s.cfg.ProjectSlice+1, maxSliceRecords, maxSliceBytes); err != nil {
		t.Fatal(err)
	}
	// 9 rows take the records read past 8,192; one more shows the rest pending.
	if got := len(p.rows); got != 10 {
		t.Errorf("readRaw of 1,000-record rows held %d payloads, want 10", got)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 20000 || st.ProjectionSlices != 3 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 20000 in 3 (8+8+4 requests), lag 0",
			st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	if n := countRows(t, s, "logs"); n != 20000 {
		t.Errorf("logs rows: got %d, want 20000", n)
	}
}

// TestProjectionSlicesWeighRows: requests of one record are projected maxSliceRecords /
// (1 + sliceRowWeight) to a slice (1,170), not ProjectSlice (2,048) nor 8,192: each raw row
// weighs sliceRowWeight records beyond its own.
func TestProjectionSlicesWeighRows(t *testing.T) {
	perSlice := maxSliceRecords / (1 + sliceRowWeight)
	if perSlice >= DefaultProjectSlice {
		t.Fatalf("one-record slices of %d rows: the weight no longer bounds them before ProjectSlice (%d)", perSlice, DefaultProjectSlice)
	}
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, Sync: SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	requests := perSlice + 30
	for i := range requests {
		appendLogs(t, s, makeLogs("svc", fmt.Sprint("one-", i), 1))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != uint64(requests) || st.ProjectionSlices != 2 {
		t.Errorf("Stats: got %d projected in %d slices; want %d in 2 (%d + 30 requests)",
			st.Logs.RecordsProjected, st.ProjectionSlices, requests, perSlice)
	}
}

// TestProjectionBoundsBigPayloads: a slice also stops at maxSliceBytes of payload, so requests
// of few but large records are projected two to a slice here, and a slice reads only the rows
// it takes plus one, instead of ProjectSlice payloads of megabytes each.
func TestProjectionBoundsBigPayloads(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	// Each payload is a little over a third of maxSliceBytes: two fit in a slice, three do not.
	body := strings.Repeat("x", maxSliceBytes/3)
	for range 12 {
		appendLogs(t, s, makeLogs("svc", body, 1))
	}
	p := newProjector(s, s.shards[0])
	if err := p.load(); err != nil {
		t.Fatal(err)
	}
	if err := p.readRaw(&p.rows, nil, p.hwm, s.cfg.ProjectSlice+1, maxSliceRecords, maxSliceBytes); err != nil {
		t.Fatal(err)
	}
	// 3 rows take the bytes read past maxSliceBytes; one more shows the rest pending.
	if got := len(p.rows); got != 4 {
		t.Errorf("readRaw of %d-byte rows held %d payloads, want 4", len(p.rows[0].Payload), got)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 12 || st.ProjectionSlices != 6 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 12 in 6, lag 0",
			st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	var n, short int
	if err := s.ReadDB().QueryRow(`SELECT count(*), count(*) FILTER (WHERE length(body) != ?) FROM logs`,
		len(body)+2).Scan(&n, &short); err != nil {
		t.Fatal(err)
	}
	if n != 12 || short != 0 {
		t.Errorf("logs: %d rows, %d without their whole body; want 12, 0", n, short)
	}
}

// TestProjectorSliceStaysInCache: a slice that dirties more pages than the projector's page
// cache holds (2 MiB) keeps them until its commit instead of spilling them to the WAL
// mid-transaction (with 4 KiB pages: 1118 pages written, 675 of them spilled, with spilling on), where a spilled
// page that changes again is read back or rewritten in its frame, and the commit then recomputes
// the checksums of every frame after it. The page counters in Stats show it.
func TestProjectorSliceStaysInCache(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	// As many requests of 16 logs as one slice takes (372), each log ~650 bytes as a row: one
	// slice of ~3.5 MiB of logs rows.
	prefix := strings.Repeat("a log body of some length ", 22)
	for i := range maxSliceRecords / (16 + sliceRowWeight) {
		appendLogs(t, s, makeLogs(fmt.Sprint("svc", i%5), fmt.Sprint(prefix, i), 16))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	st := s.Stats()
	if st.ProjectionSlices != 1 {
		t.Fatalf("projected in %d slices, want 1", st.ProjectionSlices)
	}
	// Twice the cache's 2 MiB in pages of the file's size (8 KiB: 256 pages in the cache).
	cachePages := int64(2<<20) / pragma(t, s.shards[0].conn, "page_size")
	if pg := st.ProjectionPages; int64(pg.Written) < 2*cachePages || pg.Spilled != 0 {
		t.Errorf("projector pages: %d written, %d spilled; want more than twice the cache's %d written, none spilled",
			pg.Written, pg.Spilled, cachePages)
	}
}

// TestProjectionIntervalGathersTrickle: once caught up, the projector waits
// out ProjectInterval after its last slice before the next, so appends that
// trickle in meanwhile are projected together; a backlog found at start is
// projected at once, and a Close during the wait loses nothing.
func TestProjectionIntervalGathersTrickle(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, ProjectInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "first", 2))
	waitProjected(t, s) // the first slice does not wait: nothing was projected before
	first := s.Stats()
	for i := range 5 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("trickle%d-", i), 1))
	}
	// An hour's interval cannot have passed: nothing more may be projected, however
	// slow the machine.
	time.Sleep(200 * time.Millisecond)
	if st := s.Stats(); st.ProjectedRawID != first.ProjectedRawID || st.LagRecords != 5 {
		t.Errorf("within the interval: projected raw id %d (was %d), lag %d; want unchanged, 5",
			st.ProjectedRawID, first.ProjectedRawID, st.LagRecords)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir, ProjectInterval: time.Hour})
	waitProjected(t, s) // the backlog found at start is projected without waiting
	if n := countRows(t, s, "logs"); n != 7 {
		t.Errorf("logs rows after reopen: got %d, want 7", n)
	}
}

// TestPrefetchReleasedWhenCaughtUp: once no slice is staged next, the stager's buffers (a whole
// slice of payloads and decoded records) are let go rather than kept in the heap, where they
// slowed the queries after a catch-up under the soft memory limit.
func TestPrefetchReleasedWhenCaughtUp(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("staged%d-", i), 50))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	type held struct{ staged, rows, logs int }
	seen := make(chan held, 100) // one per slice; 10 raw rows in slices of 2
	sliceHook = func(p *projector) {
		if p.next != nil && !p.next.running {
			seen <- held{1, cap(p.next.rows), cap(p.next.stage.Logs)}
		} else {
			seen <- held{}
		}
	}
	defer func() { sliceHook = nil }()
	s = openTest(t, Config{Dir: dir, ProjectSlice: 2, Logger: quietLogger})
	waitProjected(t, s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(seen)
	var last held
	for h := range seen {
		last = h
	}
	if s.stats.prefetches.Load() == 0 || last.staged == 0 {
		t.Fatalf("no slice was prefetched (%d prefetches)", s.stats.prefetches.Load())
	}
	if last.rows != 0 || last.logs != 0 {
		t.Errorf("caught up, the stager still holds room for %d raw rows and %d logs", last.rows, last.logs)
	}
}

// TestProjectedRowidsChecked: logs rows take SQLite's next rowid, which must be the id the
// projector assigned (log_text groups and span events refer to it). A row written behind the
// projector's back moves SQLite's next rowid: the slice fails its check instead of committing
// bodies indexed under other ids, and the retry assigns ids after the intruder.
func TestProjectedRowidsChecked(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	appendLogs(t, s, makeLogs("svc", "before", 10))
	waitProjected(t, s)
	db, err := sql.Open("sqlite", "file:"+s.TelemetryPath()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO logs(id, raw_id, resource_id, scope_id, time_unix_nano, observed_time_unix_nano,
		severity_number) VALUES (1000, 0, 1, 1, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "after", 5))
	waitProjected(t, s)
	if st := s.Stats(); st.ProjectionErrors == 0 {
		t.Error("no projection error: the slice committed rows under ids it did not assign")
	}
	ids := queryRows(t, s.ReadDB(), `SELECT min(id), max(id), count(*) FROM logs WHERE body LIKE 'after%'`)
	if got := strings.Join(ids[0], " "); got != "1001 1005 5" {
		t.Errorf("ids of the later logs (min max count): %s, want 1001 1005 5", got)
	}
	groups := queryRows(t, s.ReadDB(), `SELECT rowid FROM log_text WHERE log_text MATCH ?`, stage.TextQuery("aft"))
	if len(groups) != 1 || groups[0][0] != fmt.Sprint(1001>>schema.LogTextShift) {
		t.Errorf("log_text groups matching the later bodies: %v, want [[%d]]", groups, 1001>>schema.LogTextShift)
	}
}

// TestPayloadArena: the buffers of one slice never overlap, a payload too big for a chunk gets
// its own, and after reset the same slice fits in the chunks the arena already has.
func TestPayloadArena(t *testing.T) {
	sizes := []int{0, 1, 2500, stage.ArenaChunk / 4, stage.ArenaChunk/4 + 1, 3000, stage.ArenaChunk, 17}
	for range 300 {
		sizes = append(sizes, 100+len(sizes)*37%5000)
	}
	var a stage.ByteArena
	fill := func() [][]byte {
		a.Reset()
		bufs := make([][]byte, len(sizes))
		for i, n := range sizes {
			b := a.Alloc(n)
			if len(b) != 0 || cap(b) != n {
				t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
			}
			bufs[i] = append(b, bytes.Repeat([]byte{byte(i)}, n)...)
		}
		for i, b := range bufs {
			if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, sizes[i])) {
				t.Fatalf("buffer %d (%d bytes) was overwritten", i, sizes[i])
			}
		}
		return bufs
	}
	first := fill()
	chunks := len(a.Chunks)
	var small int
	for _, n := range sizes {
		if n <= stage.ArenaChunk/4 {
			small += n
		}
	}
	if max := (small/(stage.ArenaChunk*3/4) + 1) + 1; chunks > max {
		t.Errorf("%d chunks for %d bytes of small payloads, want at most %d", chunks, small, max)
	}
	inChunk := func(b []byte) bool {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		for _, c := range a.Chunks {
			if start := uintptr(unsafe.Pointer(unsafe.SliceData(c))); at >= start && at < start+uintptr(cap(c)) {
				return true
			}
		}
		return false
	}
	for i, b := range first {
		if n := sizes[i]; n > 0 && (n > stage.ArenaChunk/4) == inChunk(b) {
			t.Errorf("payload %d (%d bytes): in a chunk %v", i, n, inChunk(b))
		}
	}
	fill()
	if len(a.Chunks) != chunks {
		t.Errorf("the same slice again took %d chunks, had %d", len(a.Chunks), chunks)
	}
}
