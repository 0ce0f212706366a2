package query

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TraceSummary describes one trace in a list.
type TraceSummary struct {
	TraceID           string   `json:"trace_id"`
	RootService       string   `json:"root_service"`
	RootName          string   `json:"root_name"`
	StartTimeUnixNano int64    `json:"start_time_unix_nano"`
	DurationNano      int64    `json:"duration_nano"` // last span end - first span start
	RootDurationNano  int64    `json:"root_duration_nano"`
	SpanCount         int64    `json:"span_count"`
	Error             bool     `json:"error"` // some span has status ERROR
	Services          []string `json:"services"`
	// Resource is the attributes of the root span's resource.
	Resource RawJSON `json:"resource,omitempty"`
}

// StatusError is OTLP's STATUS_CODE_ERROR.
const StatusError = 2

// Traces lists traces by their root span, newest first. service, since,
// until and min_duration apply to the root span; error to any span.
func (r *Reader) Traces(ctx context.Context, q TraceQuery) ([]TraceSummary, error) {
	schema, err := r.traceSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("query traces: %w", err)
	}
	w := &sqlWhere{}
	w.add("r.parent_span_id IS NULL")
	if q.Service != "" {
		names, err := r.serviceNames(ctx, q.Service)
		if err != nil {
			return nil, err
		}
		servicePred(w, "r.service", names)
	}
	res, err := r.resolveResources(ctx, schema, q.Attrs)
	if err != nil {
		return nil, err
	}
	if res.none() {
		return []TraceSummary{}, nil
	}
	res.preds(w, "r.resource_id", "r.service", schema, q.Attrs)
	addRecordAttrPreds(w, "r.attributes", q.Attrs)
	if q.Since != 0 {
		w.add("r.start_time_unix_nano >= ?", q.Since)
	}
	if q.Until != 0 {
		w.add("r.start_time_unix_nano < ?", q.Until)
	}
	if q.MinDuration > 0 {
		w.add("r.duration_nano >= ?", int64(q.MinDuration))
	}
	if q.Error != nil {
		not := "NOT "
		if *q.Error {
			not = ""
		}
		w.add(not + traceHasError)
	}
	out, idx, err := r.traceRoots(ctx, tracesSQL(w, schema), append(w.args, q.Limit)...)
	if err != nil || len(out) == 0 {
		return out, err
	}
	if err := r.aggregateTraces(ctx, out, idx); err != nil {
		return nil, err
	}
	return out, nil
}

// traceRoots runs query, a list of root spans (tracesSQL), and returns one
// summary a trace, in the query's order, and each trace's index in it.
func (r *Reader) traceRoots(ctx context.Context, query string, args ...any) ([]TraceSummary, map[string]int, error) {
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query traces: %w", err)
	}
	defer rows.Close()
	out := []TraceSummary{}
	idx := map[string]int{}
	for rows.Next() {
		var s TraceSummary
		var res string
		if err := rows.Scan(&s.TraceID, &s.RootService, &s.RootName, &s.StartTimeUnixNano, &s.RootDurationNano, &res); err != nil {
			return nil, nil, fmt.Errorf("scan trace: %w", err)
		}
		if _, dup := idx[s.TraceID]; dup { // two roots in one trace: list it once
			continue
		}
		if len(res) > 2 {
			s.Resource = RawJSON(res)
		}
		idx[s.TraceID] = len(out)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("query traces: %w", err)
	}
	return out, idx, nil
}

// aggregateTraces fills in what the summaries in out say of all their
// spans: count, error, extent and services. idx is each trace's index in out.
func (r *Reader) aggregateTraces(ctx context.Context, out []TraceSummary, idx map[string]int) error {
	args := make([]any, len(out))
	for i, s := range out {
		args[i] = s.TraceID
	}
	agg, err := r.db.QueryContext(ctx, traceAggSQL(len(out)), args...)
	if err != nil {
		return fmt.Errorf("aggregate traces: %w", err)
	}
	defer agg.Close()
	for agg.Next() {
		var id, services string
		var n, start, end int64
		var isErr bool
		if err := agg.Scan(&id, &n, &isErr, &start, &end, &services); err != nil {
			return fmt.Errorf("scan trace aggregate: %w", err)
		}
		s := &out[idx[id]]
		s.SpanCount, s.Error, s.StartTimeUnixNano, s.DurationNano = n, isErr, start, end-start
		s.Services = strings.Split(services, ",")
		slices.Sort(s.Services)
	}
	if err := agg.Err(); err != nil {
		return fmt.Errorf("aggregate traces: %w", err)
	}
	return nil
}

// Span is one span of a TraceTree.
type Span struct {
	SpanID            string  `json:"span_id"`
	ParentSpanID      string  `json:"parent_span_id,omitempty"`
	Parent            int     `json:"parent"` // index into Spans; -1 for a root or an orphan
	Depth             int     `json:"depth"`
	Children          int     `json:"children"`
	Service           string  `json:"service"`
	Name              string  `json:"name"`
	Kind              int32   `json:"kind"`
	StartTimeUnixNano int64   `json:"start_time_unix_nano"`
	EndTimeUnixNano   int64   `json:"end_time_unix_nano"`
	StatusCode        int32   `json:"status_code"`
	StatusMessage     string  `json:"status_message,omitempty"`
	Attributes        RawJSON `json:"attributes,omitempty"`
	// Resource is the attributes of the span's resource (service.name,
	// host.name, k8s.pod.name, ...).
	Resource RawJSON `json:"resource,omitempty"`
}

// TraceTree is a whole trace: Spans in depth-first pre-order (children by
// start time), so a waterfall draws them top to bottom; Parent and Depth
// carry the tree. Spans whose parent is absent are treated as roots
// (Orphans counts them).
type TraceTree struct {
	TraceID           string   `json:"trace_id"`
	StartTimeUnixNano int64    `json:"start_time_unix_nano"`
	EndTimeUnixNano   int64    `json:"end_time_unix_nano"`
	DurationNano      int64    `json:"duration_nano"`
	SpanCount         int      `json:"span_count"`
	Error             bool     `json:"error"`
	Services          []string `json:"services"`
	Roots             []int    `json:"roots"`
	Orphans           int      `json:"orphans"`
	MaxDepth          int      `json:"max_depth"`
	// Truncated is set when the API returned only the first limit spans
	// (in the order below, so every returned span's parent is returned).
	Truncated bool   `json:"truncated"`
	Spans     []Span `json:"spans,omitempty"` // streamed last by the API
}

// A trace of at least ParallelSpans spans has its chunks read and decoded by TraceReaders
// goroutines, each on its own read connection (tracechunks.go).
const (
	TraceReaders  = 2
	ParallelSpans = 20_000
)

// Trace loads every span of traceID, from the store's packed trace_chunks, and builds the
// tree. ErrNotFound when the trace has no spans.
func (r *Reader) Trace(ctx context.Context, traceID []byte) (*TraceTree, error) {
	release, err := r.heavy.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	t, v, err := r.fetchTrace(ctx, traceID, nil)
	if v != nil {
		t = v.materialize()
		v.release()
	}
	return t, err
}

// fetchTrace is Trace for callers that can use a traceView: a trace read
// from trace_chunks comes back as a view (which the caller must release),
// with no Span materialised, unless the tree cache wants it; a cached
// trace or one read from spans rows comes back as a TraceTree. tm, if not
// nil, accumulates the time of each stage.
//
// The caller holds a heavy-query slot (r.heavy) until it is done with the
// result.
func (r *Reader) fetchTrace(ctx context.Context, traceID []byte, tm *traceTiming) (*TraceTree, *traceView, error) {
	id := hex.EncodeToString(traceID)
	t0 := time.Now()
	lo, hi, err := r.traceBounds(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if tm != nil {
		tm.db += time.Since(t0)
	}
	if !lo.Valid {
		return nil, nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	if t := r.traces.get(id, lo.Int64, hi.Int64); t != nil {
		return t, nil, nil
	}
	v, ok, err := r.chunkView(ctx, id, lo.Int64, hi.Int64, tm)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	if !r.traces.wants(v.tree.SpanCount) {
		return nil, v, nil
	}
	t := v.materialize()
	v.release()
	r.traces.put(id, lo.Int64, hi.Int64, t)
	return t, nil, nil
}
