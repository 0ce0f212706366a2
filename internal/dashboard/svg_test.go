package dashboard

import (
	"math"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/query"
)

// testTree is a four-span trace as the query API returns it: spans in pre-order, each with its
// parent's index, depth and child count.
func testTree() *query.TraceTree {
	spans := []query.Span{
		{SpanID: "a1", Parent: -1, Children: 2, Service: "frontend", Name: "GET /cart", StartTimeUnixNano: 1000, EndTimeUnixNano: 11000},
		{SpanID: "b2", ParentSpanID: "a1", Parent: 0, Depth: 1, Children: 1, Service: "cart", Name: "load <cart>", StartTimeUnixNano: 2000, EndTimeUnixNano: 6000},
		{SpanID: "c3", ParentSpanID: "b2", Parent: 1, Depth: 2, Service: "db", Name: "SELECT", StartTimeUnixNano: 2500, EndTimeUnixNano: 5000, StatusCode: query.StatusError},
		{SpanID: "d4", ParentSpanID: "a1", Parent: 0, Depth: 1, Service: "cart", Name: "render", StartTimeUnixNano: 7000, EndTimeUnixNano: 10000},
	}
	return &query.TraceTree{TraceID: "0102030405060708090a0b0c0d0e0f10", StartTimeUnixNano: 1000, EndTimeUnixNano: 11000,
		DurationNano: 10000, SpanCount: 4, Error: true, Services: []string{"cart", "db", "frontend"}, Roots: []int{0},
		MaxDepth: 2, Spans: spans}
}

func TestWaterfallGolden(t *testing.T) {
	tr := testTree()
	got := string(Waterfall(tr, 100))
	goldentest.Check(t, "waterfall.golden", []byte(got))
	if strings.Contains(got, "<cart>") {
		t.Error("span name not escaped")
	}
	if n := strings.Count(got, `class="span"`); n != 4 {
		t.Errorf("got %d span rows, want 4", n)
	}
	if n := strings.Count(string(Waterfall(tr, 2)), `class="span"`); n != 2 {
		t.Errorf("truncated: got %d span rows, want 2", n)
	}
}

func TestChartGolden(t *testing.T) {
	lines := []Line{
		{Name: "p50", Times: []int64{0, 10, 20, 30}, Values: []float64{1, 2, math.NaN(), 4}},
		{Name: "p99 <x>", Times: []int64{0, 10, 20, 30}, Values: []float64{5, 6, 7, 8}},
	}
	got := string(Chart("latency <ms>", 0, 40, lines))
	goldentest.Check(t, "chart.golden", []byte(got))
	if strings.Contains(got, "<ms>") || strings.Contains(got, "<x>") {
		t.Error("chart text not escaped")
	}
	// The NaN gap starts a new subpath.
	if !strings.Contains(got, "M") || strings.Count(got, "M") < 3 {
		t.Errorf("want a gap (second M) in the p50 path: %s", got)
	}
	goldentest.Check(t, "chart-empty.golden", []byte(Chart("empty", 0, 40, nil)))
}
