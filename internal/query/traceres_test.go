package query

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

// TestTraceSpansCarryResource ingests one trace whose spans come from three resources, in two
// requests (so two trace_chunks rows), into a real store with the trace tables in
// telemetry.db and in a traces.db of their own, and checks that GET /api/v1/traces/{id} and
// Reader.Trace give every span its own resource's attributes.
func TestTraceSpansCarryResource(t *testing.T) {
	for _, tracesFile := range []bool{false, true} {
		t.Run(fmt.Sprint("traces file ", tracesFile), func(t *testing.T) {
			e := newEnvStore(t, querytest.OpenStoreConfig(t, store.Config{TracesFile: tracesFile}), Config{}, nil)
			now := time.Now().Add(-time.Minute)
			node7 := map[string]any{"host.name": "node-7", "k8s.pod.name": "front-1"}
			node8 := map[string]any{"host.name": "node-8", "k8s.pod.name": "cart-2"}
			e.appendSpans(t,
				spanSpec{Service: "front", TraceID: traceA, SpanID: "0000000000000001", Name: "GET /cart", Start: now, End: now.Add(time.Second), Resource: node7},
				spanSpec{Service: "cart", TraceID: traceA, SpanID: "0000000000000002", ParentID: "0000000000000001", Name: "load",
					Start: now.Add(time.Millisecond), End: now.Add(time.Millisecond * 900), Resource: node8})
			e.appendSpans(t,
				spanSpec{Service: "db", TraceID: traceA, SpanID: "0000000000000003", ParentID: "0000000000000002", Name: "query",
					Start: now.Add(2 * time.Millisecond), End: now.Add(time.Millisecond * 800)},
				spanSpec{Service: "front", TraceID: traceA, SpanID: "0000000000000004", ParentID: "0000000000000001", Name: "render",
					Start: now.Add(950 * time.Millisecond), End: now.Add(time.Second), Resource: node7})
			e.waitProjected(t)
			want := map[string]map[string]string{
				"0000000000000001": {"service.name": "front", "host.name": "node-7", "k8s.pod.name": "front-1"},
				"0000000000000002": {"service.name": "cart", "host.name": "node-8", "k8s.pod.name": "cart-2"},
				"0000000000000003": {"service.name": "db"},
				"0000000000000004": {"service.name": "front", "host.name": "node-7", "k8s.pod.name": "front-1"},
			}
			check := func(from string, spans []Span) {
				t.Helper()
				if len(spans) != len(want) {
					t.Fatalf("%s: got %d spans, want %d", from, len(spans), len(want))
				}
				for _, s := range spans {
					var got map[string]string
					if err := json.Unmarshal([]byte(s.Resource), &got); err != nil {
						t.Errorf("%s: span %s resource %q: %v", from, s.SpanID, s.Resource, err)
						continue
					}
					if fmt.Sprint(got) != fmt.Sprint(want[s.SpanID]) {
						t.Errorf("%s: span %s resource: got %v, want %v", from, s.SpanID, got, want[s.SpanID])
					}
				}
			}
			var tree TraceTree
			getJSON(t, e.base+"/api/v1/traces/"+traceA, http.StatusOK, &tree)
			check("GET /api/v1/traces/{id}", tree.Spans)
			id, _ := hex.DecodeString(traceA)
			got, err := e.api.Reader().Trace(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			check("Reader.Trace", got.Spans)
		})
	}
}
