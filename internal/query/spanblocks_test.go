package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/store"
)

// TestTracesAcrossSpanBlocks puts two traces' spans, in a traces.db of their own, on both sides
// of a block boundary of span ids (id >> SpanBlockShift) and checks that the list counts and filters them whole and that a
// fetch returns every span.
func TestTracesAcrossSpanBlocks(t *testing.T) {
	dir := t.TempDir()
	st := openStoreConfig(t, store.Config{Dir: dir, TracesFile: true}) // traces.db, attached as "traces"
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	const traceA, traceB = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	querytest.AppendSpans(t, st,
		spanSpec{Service: "front", TraceID: traceA, SpanID: "00000000000000a1", Name: "GET /a", Start: ms(0), End: ms(100)},
		spanSpec{Service: "cart", TraceID: traceA, SpanID: "00000000000000a2", ParentID: "00000000000000a1", Name: "a2", Start: ms(10), End: ms(20)},
		spanSpec{Service: "front", TraceID: traceB, SpanID: "00000000000000b1", Name: "GET /b", Start: ms(5), End: ms(50)})
	querytest.WaitProjected(t, st)
	closeStore(t, st)

	// A filler row two ids before the boundary: the projector numbers the next spans after it,
	// so the next request's spans fall on both sides.
	execTraces(t, dir, `INSERT INTO spans(id, raw_id, resource_id, scope_id, trace_id, span_id, parent_span_id, name, kind,
		start_time_unix_nano, end_time_unix_nano, duration_nano, status_code)
		VALUES (?, 0, 1, 1, 'ffffffffffffffffffffffffffffffff', '00000000000000ff', '00000000000000fe', 'filler', 0, 0, 0, 0, 0)`,
		1<<schema.SpanBlockShift-2)
	st = openStoreDir(t, dir)
	defer closeStore(t, st)
	querytest.AppendSpans(t, st,
		spanSpec{Service: "db", TraceID: traceA, SpanID: "00000000000000a3", ParentID: "00000000000000a2", Name: "a3", Start: ms(12), End: ms(18)},
		spanSpec{Service: "db", TraceID: traceA, SpanID: "00000000000000a4", ParentID: "00000000000000a2", Name: "a4", Start: ms(13), End: ms(19)},
		spanSpec{Service: "pay", TraceID: traceB, SpanID: "00000000000000b2", ParentID: "00000000000000b1", Name: "b2", Start: ms(6), End: ms(60), Err: true})
	querytest.WaitProjected(t, st)

	r := NewReader(st.ReadDB())
	var blocks []int64
	rows, err := r.db.Query(`SELECT DISTINCT id >> ? FROM spans WHERE trace_id IN (?, ?) ORDER BY 1`, schema.SpanBlockShift, traceA, traceB)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b)
	}
	rows.Close()
	if !slices.Equal(blocks, []int64{0, 1}) {
		t.Fatalf("the traces' spans lie in blocks %v, want [0 1]", blocks)
	}

	list, err := r.Traces(context.Background(), TraceQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.TraceID] = strings.Join([]string{itoa(s.SpanCount), boolStr(s.Error), strings.Join(s.Services, "+"),
			itoa(s.DurationNano / int64(time.Millisecond))}, " ")
	}
	want := map[string]string{traceA: "4 false cart+db+front 100", traceB: "2 true front+pay 55"}
	if len(got) != 2 || got[traceA] != want[traceA] || got[traceB] != want[traceB] {
		t.Errorf("trace list: %v, want %v", got, want)
	}
	checkErrorFilter := func(chunks string) {
		t.Helper()
		for _, errOnly := range []bool{true, false} {
			list, err := r.Traces(context.Background(), TraceQuery{Limit: 10, Error: &errOnly})
			if err != nil {
				t.Fatal(err)
			}
			wantID := map[bool]string{true: traceB, false: traceA}[errOnly]
			if len(list) != 1 || list[0].TraceID != wantID {
				t.Errorf("%s, error=%v: %d traces (%v), want only %s", chunks, errOnly, len(list), list, wantID)
			}
		}
	}
	checkErrorFilter("chunks with error counts")
	for id, n := range map[string]int{traceA: 4, traceB: 2} {
		bid, _ := hex.DecodeString(id)
		tree, err := r.Trace(context.Background(), bid)
		if err != nil {
			t.Fatal(err)
		}
		if len(tree.Spans) != n {
			t.Errorf("trace %s from chunks: %d spans, want %d", id[:4], len(tree.Spans), n)
		}
		b0, b1, err := r.traceBounds(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := b0.Int64, b1.Int64; lo>>schema.SpanBlockShift != 0 || hi>>schema.SpanBlockShift != 1 {
			t.Errorf("trace %s bounds %d..%d, want across blocks 0 and 1", id[:4], lo, hi)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestSpanQueriesSeekIndex checks that every query that finds spans by trace seeks
// spans_trace_block per block rather than scanning spans or the index, and that a trace list by
// service seeks the root spans' index.
func TestSpanQueriesSeekIndex(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	querytest.AppendSpans(t, st, spanSpec{Service: "s", TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "0000000000000001",
		Name: "n", Start: time.Now(), End: time.Now()})
	querytest.WaitProjected(t, st)
	const tid = "0af7651916cd43dd8448eb211c80319c"
	errWhere := &sqlWhere{}
	errWhere.add("r.parent_span_id IS NULL")
	errWhere.add(traceHasError)
	svcWhere := &sqlWhere{}
	svcWhere.add("r.parent_span_id IS NULL")
	servicePred(svcWhere, "r.service", []string{"s"})
	for name, q := range map[string]struct {
		sql  string
		args []any
		want string
	}{
		"bounds":       {chunkBoundsSQL, []any{tid}, "SEARCH trace_chunks USING INDEX sqlite_autoindex_trace_chunks_1 (trace_id=?)"},
		"error chunks": {tracesSQL(errWhere, "main"), append(errWhere.args, 10), "SEARCH c EXISTS USING INDEX sqlite_autoindex_trace_chunks_1 (trace_id=?)"},
		"aggregation":  {traceAggSQL(3), []any{tid, tid, tid}, "SEARCH s USING INDEX spans_trace_block (<expr>=? AND trace_id=?)"},
		"by service":   {tracesSQL(svcWhere, "main"), append(svcWhere.args, 10), "SEARCH r USING INDEX spans_root_service_start (service=?)"},
	} {
		plan := explain(t, st.ReadDB(), q.sql, q.args...)
		if testing.Verbose() {
			t.Logf("%s:\n%s", name, plan)
		}
		if !strings.Contains(plan, q.want) {
			t.Errorf("%s: plan does not contain %q:\n%s", name, q.want, plan)
		}
	}
}

// BenchmarkTraceList lists 50 traces (all, and those with an error) on a store of
// OTELBENCH_TRACE_SPANS spans (default 262,144) in traces of 5 spans with random ids, 1 in 20
// traces with an error span:
//
//	OTELBENCH_TRACE_SPANS=1048576 go test -run '^$' -bench TraceList -count 5 ./internal/query
func BenchmarkTraceList(b *testing.B) {
	n := 1 << 18
	if v := os.Getenv("OTELBENCH_TRACE_SPANS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	st := openStoreDir(b, dir)
	rng := rand.New(rand.NewPCG(2, 9))
	base := time.Now().Add(-time.Hour)
	const per, perTrace = 1000, 5
	for i := 0; i < n; i += per {
		spans := make([]spanSpec, 0, per)
		for t := 0; t < per/perTrace; t++ {
			tid := fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64()|1)
			bad := rng.IntN(20) == 0
			at := base.Add(time.Duration(i+t*perTrace) * time.Millisecond)
			for k := range perTrace {
				s := spanSpec{Service: fmt.Sprintf("svc-%d", k), TraceID: tid, SpanID: fmt.Sprintf("%016x", k+1),
					Name: "op", Start: at.Add(time.Duration(k) * time.Microsecond), End: at.Add(time.Millisecond), Err: bad && k == perTrace-1}
				if k > 0 {
					s.ParentID = fmt.Sprintf("%016x", k)
				}
				spans = append(spans, s)
			}
		}
		querytest.AppendSpans(b, st, spans...)
	}
	querytest.WaitProjected(b, st)
	// Reopened, so every run reads a checkpointed database: a WAL left by the last slices
	// made the first runs up to 1.5x slower.
	closeStore(b, st)
	st = openStoreDir(b, dir)
	defer closeStore(b, st)
	r := NewReader(st.ReadDB())
	yes := true
	for name, q := range map[string]TraceQuery{"all": {Limit: 50}, "errors": {Limit: 50, Error: &yes}} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				list, err := r.Traces(context.Background(), q)
				if err != nil || len(list) != 50 {
					b.Fatalf("%d traces, %v", len(list), err)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// execTelemetry runs query on the telemetry database in dir through a connection of its own (to
// shape a database the way an older version or a crash left it).
func execTelemetry(t testing.TB, dir, query string, args ...any) {
	t.Helper()
	execFile(t, telemetryPath(dir), query, args...)
}

// execTraces runs query on dir's traces.db, the trace tables of a data directory of two files.
func execTraces(t testing.TB, dir, query string, args ...any) {
	t.Helper()
	execFile(t, filepath.Join(dir, store.TracesFileName), query, args...)
}

func execFile(t testing.TB, path, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}
