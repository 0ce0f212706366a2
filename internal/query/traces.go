package query

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
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
		pred := traceHasError
		legacy, err := r.hasLegacySpans(ctx)
		if err != nil {
			return nil, err
		}
		if legacy {
			pred = "(" + traceHasError + " OR " + legacyHasError + ")"
		}
		w.add(not + pred)
	}
	rows, err := r.db.QueryContext(ctx, tracesSQL(w, schema), append(w.args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("query traces: %w", err)
	}
	out := []TraceSummary{}
	idx := map[string]int{}
	for rows.Next() {
		var s TraceSummary
		var res string
		if err := rows.Scan(&s.TraceID, &s.RootService, &s.RootName, &s.StartTimeUnixNano, &s.RootDurationNano, &res); err != nil {
			rows.Close()
			return nil, fmt.Errorf("scan trace: %w", err)
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
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query traces: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	args := make([]any, len(out))
	for i, s := range out {
		args[i] = s.TraceID
	}
	legacy, err := r.hasLegacySpans(ctx)
	if err != nil {
		return nil, err
	}
	agg, err := r.db.QueryContext(ctx, traceAggSQL(len(out), legacy), args...)
	if err != nil {
		return nil, fmt.Errorf("aggregate traces: %w", err)
	}
	defer agg.Close()
	for agg.Next() {
		var id, services string
		var n, start, end int64
		var isErr bool
		if err := agg.Scan(&id, &n, &isErr, &start, &end, &services); err != nil {
			return nil, fmt.Errorf("scan trace aggregate: %w", err)
		}
		s := &out[idx[id]]
		s.SpanCount, s.Error, s.StartTimeUnixNano, s.DurationNano = n, isErr, start, end-start
		s.Services = strings.Split(services, ",")
		slices.Sort(s.Services)
	}
	return out, agg.Err()
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

	resourceID int64 // read from spans rows; resolved into Resource
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

// A trace of at least ParallelSpans spans is read as TraceParts id ranges,
// TraceReaders at a time (one read connection each). Several small parts
// rather than two big ones bound the packed strings SQLite builds (its
// allocator keeps what it once held: two 10 MB group_concat buffers of a
// 161,000-span trace cost ~80 MB of RSS; eight parts, two at a time, ~20).
const (
	TraceParts    = 8
	TraceReaders  = 2
	ParallelSpans = 20_000
)

// Trace loads every span of traceID and builds the tree. ErrNotFound when
// the trace has no spans. It reads the store's packed trace_chunks when the
// trace has them (schema version 2); otherwise (older data) the spans rows,
// a big trace as TraceParts id ranges in parallel: reading rows through
// database/sql is the dominant cost, and it splits cleanly.
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
	if ok {
		if !r.traces.wants(v.tree.SpanCount) {
			return nil, v, nil
		}
		t := v.materialize()
		v.release()
		r.traces.put(id, lo.Int64, hi.Int64, t)
		return t, nil, nil
	}
	t, err := r.traceFromRows(ctx, id, lo.Int64, hi.Int64, tm)
	if err != nil {
		return nil, nil, err
	}
	r.traces.put(id, lo.Int64, hi.Int64, t)
	return t, nil, nil
}

// traceFromRows builds the tree of trace id from its spans rows lo..hi.
// tm, if not nil, gets the time of the reads (db) and of the tree (build).
func (r *Reader) traceFromRows(ctx context.Context, id string, lo, hi int64, tm *traceTiming) (*TraceTree, error) {
	t0 := time.Now()
	parts := 1
	if hi-lo+1 >= ParallelSpans {
		parts = TraceParts
	}
	chunks := make([][]Span, parts)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(TraceReaders)
	width := (hi - lo + int64(parts)) / int64(parts)
	for i := range parts {
		from, to := lo+int64(i)*width, min(lo+int64(i+1)*width-1, hi)
		g.Go(func() (err error) {
			chunks[i], err = r.spanRange(gctx, id, from, to)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	spans := chunks[0]
	if len(chunks) > 1 {
		n := 0
		for _, c := range chunks {
			n += len(c)
		}
		spans = make([]Span, 0, n)
		for i, c := range chunks {
			spans = append(spans, c...)
			chunks[i] = nil // let the part go before the tree is built
		}
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("trace %s: %w", id, ErrNotFound)
	}
	schema, err := r.traceSchema(ctx)
	if err == nil {
		err = r.spanResources(ctx, schema, spans)
	}
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", id, err)
	}
	t1 := time.Now()
	t := BuildTree(id, spans)
	if tm != nil {
		tm.db += t1.Sub(t0)
		tm.build += time.Since(t1)
	}
	return t, nil
}

// spanRange reads the spans of trace id with row ids in [from, to].
//
// It asks SQLite for ONE value: every span packed by group_concat into a
// self-delimiting string (text fields length-prefixed, numbers
// ';'-terminated), which Go splits without allocating per field (the span
// strings are substrings of it). Stepping 161,000 rows through
// database/sql, with a driver value and a copy per column, cost ~20× more
// (measured: docs/benchmarks/query.md).
func (r *Reader) spanRange(ctx context.Context, id string, from, to int64) ([]Span, error) {
	var packed sql.NullString
	err := r.db.QueryRowContext(ctx, spanRangeSQL, id, from, to).Scan(&packed)
	if err != nil {
		return nil, fmt.Errorf("query trace: %w", err)
	}
	spans, err := unpackSpans(packed.String)
	if err != nil {
		return nil, fmt.Errorf("query trace %s: %w", id, err)
	}
	return spans, nil
}

// spanRangeSQL reads the spans of trace ?1 with row ids in [?2, ?3] as one packed string.
var spanRangeSQL = spanRangeCTE + ` SELECT group_concat(
		octet_length(span_id)||':'||span_id||
		octet_length(coalesce(parent_span_id,''))||':'||coalesce(parent_span_id,'')||
		octet_length(coalesce(service,''))||':'||coalesce(service,'')||
		octet_length(name)||':'||name||
		kind||';'||start_time_unix_nano||';'||end_time_unix_nano||';'||status_code||';'||
		octet_length(status_message)||':'||status_message||
		octet_length(attributes)||':'||attributes||
		resource_id||';', '')
		FROM sb ` + spansOf("sb", "spans", "spans.trace_id = ?1") + ` AND spans.id BETWEEN ?2 AND ?3`

var errPacked = errors.New("malformed packed spans")

// unpackSpans splits the group_concat format of spanRange.
func unpackSpans(p string) ([]Span, error) {
	spans := make([]Span, 0, max(16, len(p)/100)) // ~130 bytes a span packed: avoid regrowing
	text := func() (string, bool) {
		i := strings.IndexByte(p, ':')
		if i <= 0 {
			return "", false
		}
		n, err := strconv.Atoi(p[:i])
		if err != nil || n < 0 || i+1+n > len(p) {
			return "", false
		}
		v := p[i+1 : i+1+n]
		p = p[i+1+n:]
		return v, true
	}
	num := func() (int64, bool) {
		i := strings.IndexByte(p, ';')
		if i <= 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(p[:i], 10, 64)
		p = p[i+1:]
		return n, err == nil
	}
	for len(p) > 0 {
		var s Span
		var ok [11]bool
		var kind, status int64
		s.SpanID, ok[0] = text()
		s.ParentSpanID, ok[1] = text()
		s.Service, ok[2] = text()
		s.Name, ok[3] = text()
		kind, ok[4] = num()
		s.StartTimeUnixNano, ok[5] = num()
		s.EndTimeUnixNano, ok[6] = num()
		status, ok[7] = num()
		s.StatusMessage, ok[8] = text()
		var attrs string
		attrs, ok[9] = text()
		s.resourceID, ok[10] = num()
		for _, o := range ok {
			if !o {
				return nil, errPacked
			}
		}
		s.Kind, s.StatusCode = int32(kind), int32(status)
		if len(attrs) > 2 {
			s.Attributes = RawJSON(attrs)
		}
		spans = append(spans, s)
	}
	return spans, nil
}
