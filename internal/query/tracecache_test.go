package query

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
)

func TestTraceCacheRevalidates(t *testing.T) {
	st := querytest.OpenStore(t)
	r := NewReader(st.ReadDB()).WithTraceCache(100)
	r.traces.minSpans = 1
	t0 := time.Now().Add(-time.Minute)
	querytest.AppendSpans(t, st,
		querytest.SpanSpec{Service: "a", TraceID: traceA, SpanID: "0000000000000001", Name: "root", Start: t0, End: t0.Add(time.Second)},
		querytest.SpanSpec{Service: "a", TraceID: traceA, SpanID: "0000000000000002", ParentID: "0000000000000001", Name: "child", Start: t0, End: t0.Add(time.Millisecond)},
	)
	querytest.WaitProjected(t, st)
	id, _ := hex.DecodeString(traceA)
	ctx := context.Background()
	first, err := r.Trace(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Trace(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("second fetch rebuilt the tree; want the cached one")
	}
	// A late span invalidates the entry.
	querytest.AppendSpans(t, st, querytest.SpanSpec{Service: "b", TraceID: traceA, SpanID: "0000000000000003",
		ParentID: "0000000000000002", Name: "late", Start: t0, End: t0.Add(time.Microsecond)})
	querytest.WaitProjected(t, st)
	third, err := r.Trace(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if third == second || third.SpanCount != 3 || third.Spans[2].Name != "late" {
		t.Errorf("after a late span: got %d spans (same tree %v), want 3 with the late one last", third.SpanCount, third == second)
	}
	// A trace bigger than the whole cache is not cached.
	small := NewReader(st.ReadDB()).WithTraceCache(2)
	small.traces.minSpans = 1
	a, _ := small.Trace(ctx, id)
	b, _ := small.Trace(ctx, id)
	if a == b || small.traces.held != 0 {
		t.Errorf("3-span trace cached in a 2-span cache (held %d)", small.traces.held)
	}
}
