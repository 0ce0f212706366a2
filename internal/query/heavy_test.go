package query

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestTraceLimitTruncates: limit returns the first spans in tree order, each
// with its parent, and says truncated.
func TestTraceLimitTruncates(t *testing.T) {
	e := newEnv(t, Config{})
	now := time.Now().Add(-time.Minute)
	spans := []spanSpec{{Service: "s", TraceID: traceA, SpanID: "0000000000000001", Name: "root", Start: now, End: now.Add(time.Second)}}
	for i := 2; i <= 20; i++ {
		spans = append(spans, spanSpec{Service: "s", TraceID: traceA, SpanID: fmt.Sprintf("%016x", i), ParentID: fmt.Sprintf("%016x", i/2),
			Name: "child", Start: now.Add(time.Duration(i) * time.Millisecond), End: now.Add(time.Second)})
	}
	e.appendSpans(t, spans...)
	e.waitProjected(t)
	for _, tc := range []struct {
		query     string
		spans     int
		truncated bool
	}{
		{"", 20, false},
		{"?limit=5", 5, true},
		{"?limit=20", 20, false},
	} {
		var tr TraceTree
		getJSON(t, e.base+"/api/v1/traces/"+traceA+tc.query, http.StatusOK, &tr)
		if len(tr.Spans) != tc.spans || tr.Truncated != tc.truncated || tr.SpanCount != 20 {
			t.Errorf("%q: got %d spans, truncated %v, span_count %d; want %d, %v, 20", tc.query, len(tr.Spans), tr.Truncated, tr.SpanCount, tc.spans, tc.truncated)
		}
		for i, s := range tr.Spans {
			if s.Parent >= i || (s.Parent < 0 && s.ParentSpanID != "") {
				t.Errorf("%q: span %d has parent %d, want an earlier returned span", tc.query, i, s.Parent)
			}
		}
	}
	if code, eb := getStatus(t, e.base+"/api/v1/traces/"+traceA+"?limit=0"); code != http.StatusBadRequest || eb.Param != "limit" {
		t.Errorf("limit=0: got %d %+v, want 400 on limit", code, eb)
	}
}

// TestHeavyQueriesBounded: with every heavy slot taken, a trace or series
// request waits, then gets 503 with Retry-After; once a slot frees it is
// answered.
func TestHeavyQueriesBounded(t *testing.T) {
	e := newEnv(t, Config{})
	e.api.Reader().WithHeavyLimit(1, 50*time.Millisecond)
	now := time.Now().Add(-time.Minute)
	e.appendSpans(t, spanSpec{Service: "s", TraceID: traceA, SpanID: "0000000000000001", Name: "root", Start: now, End: now.Add(time.Second)})
	e.waitProjected(t)
	release, err := e.api.Reader().heavy.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/traces/" + traceA, "/api/v1/metrics/series?name=x"} {
		resp, err := http.Get(e.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while busy: got %d, Retry-After %q; want 503 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	release()
	var tr TraceTree
	getJSON(t, e.base+"/api/v1/traces/"+traceA, http.StatusOK, &tr)
}
