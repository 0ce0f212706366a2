package store

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/tracechunk"
)

// chunkSpansFromDB decodes every trace_chunks row of traceHex, in chunk order, into the same
// string form as spansFromDB.
func chunkSpansFromDB(t testing.TB, db *sql.DB, traceHex string) [][]string {
	t.Helper()
	rows, err := db.Query(`SELECT first_span_id, last_span_id, span_count, packed FROM trace_chunks
		WHERE trace_id = ? ORDER BY first_span_id`, traceHex)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var first, last, count int64
		var packed []byte
		if err := rows.Scan(&first, &last, &count, &packed); err != nil {
			t.Fatal(err)
		}
		c := tracechunk.Columns{IDs: make([]uint64, count), Parents: make([]uint64, count),
			Start: make([]int64, count), End: make([]int64, count), Text: make([]tracechunk.Text, count)}
		if _, err := tracechunk.Decode(packed, 0, c); err != nil {
			t.Fatalf("decode chunk %d..%d of span_count %d: %v", first, last, count, err)
		}
		str := func(r tracechunk.Ref) string { return string(packed[r.Off : r.Off+r.N]) }
		for i := range c.IDs {
			parent := ""
			if c.Parents[i] != 0 {
				parent = fmt.Sprintf("%016x", c.Parents[i])
			}
			tx := c.Text[i]
			out = append(out, []string{fmt.Sprintf("%016x", c.IDs[i]), parent, str(tx.Str[tracechunk.StrService]), str(tx.Str[tracechunk.StrName]),
				fmt.Sprint(tx.Kind), fmt.Sprint(c.Start[i]), fmt.Sprint(c.End[i]), fmt.Sprint(tx.Status),
				str(tx.Str[tracechunk.StrStatusMessage]), str(tx.Str[tracechunk.StrAttributes])})
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// spansFromDB reads the spans rows of traceHex in id order, with the attributes "{}" as "".
func spansFromDB(t testing.TB, db *sql.DB, traceHex string) [][]string {
	t.Helper()
	return queryRows(t, db, `SELECT span_id, coalesce(parent_span_id, ''), coalesce(service, ''), name, kind,
		start_time_unix_nano, end_time_unix_nano, status_code, status_message, iif(attributes = '{}', '', attributes)
		FROM spans WHERE trace_id = ? ORDER BY id`, traceHex)
}

// interleavedTraces builds one request holding spans of two traces, alternating.
func interleavedTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	ss := rs.ScopeSpans().AppendEmpty()
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(1 + i%2), 0xaa})
		sp.SetSpanID(pcommon.SpanID{0xff, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)})
		if i >= 2 {
			sp.SetParentSpanID(pcommon.SpanID{0xff, 0, 0, 0, 0, 0, 0, byte(i % 2)})
		}
		sp.SetName(fmt.Sprintf("op-%d", i%3))
		sp.SetKind(ptrace.SpanKind(i % 6))
		sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 - int64(i)*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*7))
		if i%5 == 0 {
			sp.Attributes().PutInt("i", int64(i))
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("bad")
		}
	}
	return td
}

func TestTraceChunksMatchSpans(t *testing.T) {
	s := openTest(t, Config{})
	appendTraces(t, s, makeTraces())
	appendTraces(t, s, interleavedTraces(40))
	waitProjected(t, s)
	for _, trace := range []string{testTraceHex, "01aa0000000000000000000000000000", "02aa0000000000000000000000000000"} {
		want := spansFromDB(t, s.ReadDB(), trace)
		if len(want) == 0 {
			t.Fatalf("trace %s: no spans", trace)
		}
		if diff := cmp.Diff(want, chunkSpansFromDB(t, s.ReadDB(), trace)); diff != "" {
			t.Errorf("trace %s: chunks differ from spans (-spans +chunks):\n%s", trace, diff)
		}
	}
	// Each chunk's id range covers exactly its trace's spans of that slice.
	bad := queryRows(t, s.ReadDB(), `SELECT c.trace_id, c.first_span_id FROM trace_chunks c
		WHERE c.span_count != (SELECT count(*) FROM spans s WHERE s.trace_id = c.trace_id AND s.id BETWEEN c.first_span_id AND c.last_span_id)
		   OR c.first_span_id != (SELECT min(id) FROM spans s WHERE s.trace_id = c.trace_id AND s.id >= c.first_span_id)`)
	if len(bad) != 0 {
		t.Errorf("chunks whose range does not match their spans: %v", bad)
	}
}

func TestTraceChunksNotDuplicatedOnRetry(t *testing.T) {
	dir := t.TempDir()
	writeBacklog(t, dir, func(s *Store) {
		appendTraces(t, s, makeTraces())
		appendTraces(t, s, interleavedTraces(10))
	})
	other := failSpanLinks(t, dir)
	s := openTest(t, Config{Dir: dir, Logger: quietLogger})
	polltest.Until(t, "a failed projection", func() bool { return s.Stats().ProjectionErrors > 0 })
	if n := countRows(t, s, "trace_chunks"); n != 0 {
		t.Fatalf("trace_chunks after failed slice: got %d, want 0 (rolled back)", n)
	}
	if _, err := other.Exec(`DROP TRIGGER fail_links`); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	got := queryRows(t, s.ReadDB(), `SELECT trace_id, sum(span_count) FROM trace_chunks GROUP BY trace_id ORDER BY trace_id`)
	want := [][]string{{"0102030405060708090a0b0c0d0e0f10", "2"}, {"01aa0000000000000000000000000000", "5"}, {"02aa0000000000000000000000000000", "5"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunk span counts (-want +got):\n%s", diff)
	}
}

// BenchmarkProjectDistinctTraces is the worst case for trace_chunks: every span is its own
// trace, so each span also costs a chunk row.
func BenchmarkProjectDistinctTraces(b *testing.B) {
	td := interleavedTraces(10)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).SetTraceID(pcommon.TraceID{byte(i + 1), 0xbb})
	}
	payload, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	benchProject(b, 3, 10, []otlpgen.Payload{{Body: payload}}, false) // 3: traces (raw.sql)
}
