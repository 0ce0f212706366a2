package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/selfusage"
)

// chunkTrace builds one traces request of spans lo..hi-1 of a trace with
// traceA's id: span i's parent is span i/3 (span 0 is the root), every 7th
// span's parent is missing (an orphan), spans 40 and 41 are each other's
// parents (a cycle), with attributes, status messages and 3 services.
func chunkTrace(lo, hi int) ptrace.Traces {
	td := ptrace.NewTraces()
	tid, _ := hex.DecodeString(traceA)
	for i := lo; i < hi; i++ {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", i%3))
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID(tid))
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)})
		switch {
		case i == 0:
		case i == 40:
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 42})
		case i == 41:
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 41})
		case i%7 == 0:
			sp.SetParentSpanID(pcommon.SpanID{0xde, 0xad, 0, 0, 0, 0, 0, byte(i)})
		default:
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, byte((i/3 + 1) >> 8), byte(i/3 + 1)})
		}
		sp.SetName(fmt.Sprintf("op %d", i%5))
		sp.SetKind(ptrace.SpanKind(i % 6))
		sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i%11)*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_900_000 - int64(i)))
		if i%4 == 0 {
			sp.Attributes().PutStr("http.route", "/a\"b")
			sp.Attributes().PutInt("i", int64(i))
		}
		if i%9 == 0 {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage(fmt.Sprintf("failed %d", i))
		}
	}
	return td
}

// traceFromChunks builds the tree of trace id (span rows lo..hi) from its
// trace_chunks, with its Spans materialised, as Reader.Trace does without
// locating the span rows or using the tree cache.
func (r *Reader) traceFromChunks(ctx context.Context, id string, lo, hi int64) (t *TraceTree, ok bool, err error) {
	v, ok, err := r.chunkView(ctx, id, lo, hi, nil)
	if err != nil || !ok {
		return nil, ok, err
	}
	t = v.materialize()
	v.release()
	return t, true, nil
}

// treeFromRows is the reference for the trees read from trace_chunks: every spans row of
// trace id with its resource's attributes, read one by one, built by BuildTree.
func treeFromRows(db *sql.DB, id string) (*TraceTree, error) {
	rows, err := db.Query(`SELECT s.span_id, coalesce(s.parent_span_id, ''), coalesce(s.service, ''), s.name, s.kind,
		s.start_time_unix_nano, s.end_time_unix_nano, s.status_code, s.status_message, s.attributes, r.attributes
		FROM spans s JOIN resources r ON r.id = s.resource_id WHERE s.trace_id = ? ORDER BY s.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var spans []Span
	for rows.Next() {
		var s Span
		var attrs, res string
		if err := rows.Scan(&s.SpanID, &s.ParentSpanID, &s.Service, &s.Name, &s.Kind, &s.StartTimeUnixNano,
			&s.EndTimeUnixNano, &s.StatusCode, &s.StatusMessage, &attrs, &res); err != nil {
			return nil, err
		}
		if len(attrs) > 2 {
			s.Attributes = RawJSON(attrs)
		}
		if len(res) > 2 {
			s.Resource = RawJSON(res)
		}
		spans = append(spans, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return BuildTree(id, spans), nil
}

func TestTraceChunksMatchRows(t *testing.T) {
	st := querytest.OpenStore(t)
	var m ptrace.ProtoMarshaler
	for _, r := range [][2]int{{0, 30}, {30, 60}, {60, 100}} {
		b, err := m.MarshalTraces(chunkTrace(r[0], r[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(context.Background(), 3, b, r[1]-r[0]); err != nil { // 3: traces
			t.Fatal(err)
		}
		querytest.WaitProjected(t, st) // one slice (one chunk) per request
	}
	r := NewReader(st.ReadDB())
	ctx := context.Background()
	var lo, hi int64
	if err := st.ReadDB().QueryRow(`SELECT min(id), max(id) FROM spans WHERE trace_id = ?`, traceA).Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := st.ReadDB().QueryRow(`SELECT count(*) FROM trace_chunks WHERE trace_id = ?`, traceA).Scan(&chunks); err != nil || chunks != 3 {
		t.Fatalf("trace_chunks rows: %d (%v), want 3", chunks, err)
	}
	rows, err := treeFromRows(st.ReadDB(), traceA)
	if err != nil {
		t.Fatal(err)
	}
	// Read by one goroutine, then split between TraceReaders.
	var packed *TraceTree
	for _, parallel := range []int{ParallelSpans, 1} {
		chunkParallelSpans = parallel
		var ok bool
		packed, ok, err = r.traceFromChunks(ctx, traceA, lo, hi)
		chunkParallelSpans = ParallelSpans
		if err != nil || !ok {
			t.Fatalf("traceFromChunks (parallel from %d spans): ok %v, err %v", parallel, ok, err)
		}
		if diff := cmp.Diff(rows, packed); diff != "" {
			t.Errorf("tree from chunks (parallel from %d spans) differs from tree from rows (-rows +chunks):\n%s", parallel, diff)
		}
	}
	if packed.SpanCount != 100 || packed.Orphans == 0 || len(packed.Services) != 3 || !packed.Error {
		t.Errorf("tree: %d spans, %d orphans, services %v, error %v; want 100, >0, 3, true",
			packed.SpanCount, packed.Orphans, packed.Services, packed.Error)
	}
	// Trace uses the chunks and returns the same tree.
	id, _ := hex.DecodeString(traceA)
	got, err := r.Trace(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("Trace differs from the rows' tree (-rows +Trace):\n%s", diff)
	}
}

func TestTraceBufsSplit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []int // per chunk
		n     int
		want  [][2]int
	}{
		{"one chunk", []int{10}, 2, [][2]int{{0, 1}}},
		{"even", []int{10, 10, 10, 10}, 2, [][2]int{{0, 2}, {2, 4}}},
		{"big first", []int{100, 1, 1, 1}, 2, [][2]int{{0, 1}, {1, 4}}},
		{"big last", []int{1, 1, 1, 100}, 2, [][2]int{{0, 4}}},
		{"three ways", []int{5, 5, 5, 5, 5, 5}, 3, [][2]int{{0, 2}, {2, 4}, {4, 6}}},
		{"one way", []int{5, 5}, 1, [][2]int{{0, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b traceBufs
			span := 0
			for _, n := range tc.spans {
				b.chunks = append(b.chunks, chunkInfo{span: span, spans: n})
				span += n
			}
			b.ids = make([]uint64, span)
			if diff := cmp.Diff(tc.want, b.split(tc.n)); diff != "" {
				t.Errorf("split (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTraceBufsKept: released buffers serve the next fetch unless they are
// too big to keep.
func TestTraceBufsKept(t *testing.T) {
	getTraceBufs() // empty the keeper
	b := getTraceBufs()
	b.arena = make([]byte, 100)
	b.release()
	if got := getTraceBufs(); got != b || len(got.arena) != 0 || cap(got.arena) != 100 {
		t.Errorf("after release: got %p (arena %d/%d), want the released %p, emptied", got, len(got.arena), cap(got.arena), b)
	}
	big := getTraceBufs()
	big.arena = make([]byte, maxKeptTraceBytes+1)
	big.release()
	if got := getTraceBufs(); got == big {
		t.Errorf("buffers of %d bytes kept; the bound is %d", big.bytes(), maxKeptTraceBytes)
	}
	traceBufKeeper.drop()
	if got := getTraceBufs(); got == b || got == big {
		t.Error("dropped buffers came back")
	}
}

// BenchmarkTrace161k measures one 161,000-span trace (fan-out 8, 161
// requests of 1,000 spans) read from the packed chunks, no tree cache:
//
//   - chunks: the chunks read and decoded, tree built and its Spans
//     materialised;
//   - trace: Reader.Trace, the same after locating the trace's span rows
//     (what the dashboard gets; the API's whole server time until it
//     streamed from columns);
//   - fetch: the API's fetch, located, read, decoded and tree built on the
//     columns, no Span (what its "tree" Server-Timing measures: the
//     target's server time);
//   - handler: the whole GET /api/v1/traces/{id} handler writing the JSON
//     to a discarding ResponseWriter;
//
// Each reports the process CPU time per op beside the wall time.
//
//	go test -run '^$' -bench Trace161k -benchtime 10x ./internal/query
func BenchmarkTrace161k(b *testing.B) {
	const spans, perReq = 161_000, 1000
	st := querytest.OpenStore(b)
	tid, _ := hex.DecodeString(traceA)
	var m ptrace.ProtoMarshaler
	for lo := 0; lo < spans; lo += perReq {
		td := ptrace.NewTraces()
		for i := lo; i < lo+perReq; i++ {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", i%12))
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID(tid))
			sp.SetSpanID(pcommon.SpanID{1, 0, 0, 0, byte((i + 1) >> 24), byte((i + 1) >> 16), byte((i + 1) >> 8), byte(i + 1)})
			if i > 0 {
				p := (i-1)/8 + 1
				sp.SetParentSpanID(pcommon.SpanID{1, 0, 0, 0, byte(p >> 24), byte(p >> 16), byte(p >> 8), byte(p)})
			}
			sp.SetName(fmt.Sprintf("op-%d", i%40))
			sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*1000))
			sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*1000 + 500))
			sp.Attributes().PutStr("http.route", "/api/cart")
			sp.Attributes().PutInt("i", int64(i))
		}
		p, err := m.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Append(context.Background(), 3, p, perReq); err != nil {
			b.Fatal(err)
		}
	}
	querytest.WaitProjected(b, st)
	r := NewReader(st.ReadDB())
	ctx := context.Background()
	var lo, hi int64
	if err := st.ReadDB().QueryRow(`SELECT min(id), max(id) FROM spans WHERE trace_id = ?`, traceA).Scan(&lo, &hi); err != nil {
		b.Fatal(err)
	}
	b.Run("chunks", func(b *testing.B) {
		cpu0, _ := selfusage.CPU()
		for b.Loop() {
			t, ok, err := r.traceFromChunks(ctx, traceA, lo, hi)
			if err != nil || !ok || t.SpanCount != spans {
				b.Fatalf("traceFromChunks: ok %v, err %v", ok, err)
			}
		}
		reportCPU(b, cpu0)
	})
	b.Run("trace", func(b *testing.B) {
		cpu0, _ := selfusage.CPU()
		for b.Loop() {
			t, err := r.Trace(ctx, tid)
			if err != nil || t.SpanCount != spans {
				b.Fatalf("Trace: %v", err)
			}
		}
		reportCPU(b, cpu0)
	})
	b.Run("fetch", func(b *testing.B) {
		cpu0, _ := selfusage.CPU()
		for b.Loop() {
			_, v, err := r.fetchTrace(ctx, tid, nil)
			if err != nil || v == nil || v.tree.SpanCount != spans {
				b.Fatalf("fetchTrace: view %v, err %v", v != nil, err)
			}
			v.release()
		}
		reportCPU(b, cpu0)
	})
	b.Run("handler", func(b *testing.B) {
		mux := http.NewServeMux()
		New(r, Config{}).MountOn(mux.Handle)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/traces/"+traceA, nil)
		var w discardResponse
		cpu0, _ := selfusage.CPU()
		for b.Loop() {
			w = discardResponse{h: http.Header{}}
			mux.ServeHTTP(&w, req)
			if w.status != http.StatusOK || w.n < spans*100 {
				b.Fatalf("status %d, %d bytes", w.status, w.n)
			}
		}
		reportCPU(b, cpu0)
		b.ReportMetric(float64(w.n), "json-bytes/op")
	})
}

// reportCPU reports the process CPU time per op since cpu0 (from
// selfusage.CPU) as cpu-ms/op.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu, err := selfusage.CPU(); err == nil && b.N > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

// discardResponse is an http.ResponseWriter that counts and drops the body.
type discardResponse struct {
	h      http.Header
	status int
	n      int
}

func (w *discardResponse) Header() http.Header { return w.h }
func (w *discardResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}
