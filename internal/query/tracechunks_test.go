package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/query/querytest"
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
	packed, ok, err := r.traceFromChunks(ctx, traceA, lo, hi)
	if err != nil || !ok {
		t.Fatalf("traceFromChunks: ok %v, err %v", ok, err)
	}
	rows, err := r.traceFromRows(ctx, traceA, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, packed); diff != "" {
		t.Errorf("tree from chunks differs from tree from rows (-rows +chunks):\n%s", diff)
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

// TestTraceChunksOlderData: a trace whose spans predate trace_chunks_start
// (projected before the schema upgrade) is read from the spans rows.
func TestTraceChunksOlderData(t *testing.T) {
	st := querytest.OpenStore(t)
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(chunkTrace(0, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), 3, b, 10); err != nil {
		t.Fatal(err)
	}
	querytest.WaitProjected(t, st)
	r := NewReader(st.ReadDB())
	ctx := context.Background()
	var start int64
	if err := st.ReadDB().QueryRow(`SELECT span_id FROM trace_chunks_start`).Scan(&start); err != nil {
		t.Fatal(err)
	}
	// Ask as if the trace's first span row were below the start.
	if _, ok, err := r.traceFromChunks(ctx, traceA, start-1, start+9); err != nil || ok {
		t.Errorf("traceFromChunks below the chunk start: ok %v, err %v; want false, nil", ok, err)
	}
	if _, ok, err := r.traceFromChunks(ctx, traceA, start, start+9); err != nil || !ok {
		t.Errorf("traceFromChunks at the chunk start: ok %v, err %v; want true, nil", ok, err)
	}
	// A database without the tables at all (version 1) reads as "no chunks".
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, err := NewReader(db).traceFromChunks(ctx, traceA, 1, 2); err != nil || ok {
		t.Errorf("traceFromChunks without trace_chunks: ok %v, err %v; want false, nil", ok, err)
	}
}

// BenchmarkTrace161k measures building the tree of one 161,000-span trace
// (fan-out 8, 161 requests of 1,000 spans) from the packed chunks, beside
// the row-by-row read it replaces (no tree cache in either).
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
		for b.Loop() {
			t, ok, err := r.traceFromChunks(ctx, traceA, lo, hi)
			if err != nil || !ok || t.SpanCount != spans {
				b.Fatalf("traceFromChunks: ok %v, err %v", ok, err)
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			t, err := r.traceFromRows(ctx, traceA, lo, hi)
			if err != nil || t.SpanCount != spans {
				b.Fatalf("traceFromRows: %v", err)
			}
		}
	})
}
