package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/stage"
	"github.com/otelbench/otelbench/internal/storetest"
)

// The OTLP requests the tests send (internal/storetest).
var (
	makeLogs, makeTraces, makeMetrics    = storetest.Logs, storetest.Traces, storetest.Metrics
	benchLogs, benchTraces, benchMetrics = storetest.LogsRequest, storetest.TracesRequest, storetest.MetricsRequest
	testTraceID, testSpanID, testParent  = storetest.TraceID, storetest.SpanID, storetest.ParentSpanID
	logsMarshaler                        plog.ProtoMarshaler
	logsUnmarshaler                      plog.ProtoUnmarshaler
)

const testTraceHex, testSpanHex = storetest.TraceHex, storetest.SpanHex

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
	polltest.Until(t, "projection to catch up", func() bool {
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
