// Package storetest builds the OTLP requests the tests of the store and the projector send: small
// ones whose every projected column a test checks (Logs, Traces, Metrics) and load-shaped ones
// of n records, marshalled (LogsRequest, TracesRequest, MetricsRequest), and what the load sends
// (LoadShaped).
package storetest

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// The ids the fixtures' traces and logs carry, and their hex forms as the projected tables hold them.
var (
	TraceID      = pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	SpanID       = pcommon.SpanID{0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x10, 0x11}
	ParentSpanID = pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1}
)

const (
	TraceHex = "0102030405060708090a0b0c0d0e0f10"
	SpanHex  = "0a0b0c0d0e0f1011"
)

// Logs builds a logs request of n records for service svc; record i has body "<prefix> i".
func Logs(svc, prefix string, n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", svc)
	rl.Resource().Attributes().PutStr("host.name", "h1")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("test-scope")
	sl.Scope().SetVersion("1.0")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_500 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
		lr.Body().SetStr(fmt.Sprintf("%s %d", prefix, i))
		lr.Attributes().PutInt("i", int64(i))
		lr.Attributes().PutStr("quote", `a "b"`)
		lr.SetTraceID(TraceID)
		lr.SetSpanID(SpanID)
	}
	return ld
}

// Traces builds a trace of two spans of service frontend: a server root (with an event, an error
// status and a trace state) and a client child (with a link).
func Traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "frontend")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("tracer")
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(TraceID)
	root.SetSpanID(ParentSpanID)
	root.SetName("GET /")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(1000)
	root.SetEndTimestamp(5000)
	root.Status().SetCode(ptrace.StatusCodeError)
	root.Status().SetMessage("boom")
	root.Attributes().PutStr("http.method", "GET")
	root.TraceState().FromRaw("k=v")
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(2000)
	ev.Attributes().PutStr("exception.type", "E")
	child := ss.Spans().AppendEmpty()
	child.SetTraceID(TraceID)
	child.SetSpanID(SpanID)
	child.SetParentSpanID(ParentSpanID)
	child.SetName("db")
	child.SetKind(ptrace.SpanKindClient)
	child.SetStartTimestamp(1500)
	child.SetEndTimestamp(2500)
	link := child.Links().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{0xff, 1})
	link.SetSpanID(pcommon.SpanID{0xee, 2})
	link.Attributes().PutBool("sampled", true)
	return td
}

// Metrics builds one metric of each of the five types.
func Metrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "api")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("meter")

	g := sm.Metrics().AppendEmpty()
	g.SetName("temp")
	g.SetUnit("Cel")
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(100)
	dp.SetDoubleValue(21.5)
	dp.Attributes().PutStr("room", "a")

	sum := sm.Metrics().AppendEmpty()
	sum.SetName("requests")
	sum.SetDescription("served")
	s := sum.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range 2 {
		dp := s.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(50)
		dp.SetTimestamp(pcommon.Timestamp(100 + i))
		dp.SetIntValue(int64(7 + i))
	}

	h := sm.Metrics().AppendEmpty()
	h.SetName("latency")
	hh := h.SetEmptyHistogram()
	hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	hdp := hh.DataPoints().AppendEmpty()
	hdp.SetTimestamp(100)
	hdp.SetCount(6)
	hdp.SetSum(12.5)
	hdp.SetMin(0.5)
	hdp.BucketCounts().FromRaw([]uint64{1, 2, 3})
	hdp.ExplicitBounds().FromRaw([]float64{1, 2.5})

	e := sm.Metrics().AppendEmpty()
	e.SetName("size")
	eh := e.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	edp := eh.DataPoints().AppendEmpty()
	edp.SetTimestamp(100)
	edp.SetCount(10)
	edp.SetScale(3)
	edp.SetZeroCount(1)
	edp.SetZeroThreshold(0.001)
	edp.Positive().SetOffset(-2)
	edp.Positive().BucketCounts().FromRaw([]uint64{4, 5})
	edp.Negative().BucketCounts().FromRaw([]uint64{})

	q := sm.Metrics().AppendEmpty()
	q.SetName("rtt")
	qdp := q.SetEmptySummary().DataPoints().AppendEmpty()
	qdp.SetTimestamp(100)
	qdp.SetCount(3)
	qdp.SetSum(9)
	qv := qdp.QuantileValues().AppendEmpty()
	qv.SetQuantile(0.5)
	qv.SetValue(2)
	qv = qdp.QuantileValues().AppendEmpty()
	qv.SetQuantile(0.99)
	qv.SetValue(4)
	return md
}

// LogsRequest is a realistic log request: a resource with 4 attributes, n records each with a
// ~90-byte body, 4 attributes and trace context.
func LogsRequest(n int) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("service.name", "checkout")
	ra.PutStr("service.version", "1.4.2")
	ra.PutStr("host.name", "node-17")
	ra.PutStr("deployment.environment", "prod")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("otelbench/load")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, int64(i))))
		lr.SetObservedTimestamp(lr.Timestamp())
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("request handled: GET /api/cart/%d status=200 duration_ms=%d user=u%d", i, 10+i, 1000+i))
		a := lr.Attributes()
		a.PutStr("http.method", "GET")
		a.PutInt("http.status_code", 200)
		a.PutStr("http.route", "/api/cart/{id}")
		a.PutDouble("duration_ms", 12.5)
		lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)})
		lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, byte(i)})
	}
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		panic(err)
	}
	return b
}

// TracesRequest is a trace request of n spans (one root, children with one event each).
func TracesRequest(n int) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "frontend")
	rs.Resource().Attributes().PutStr("host.name", "node-3")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("otelbench/load")
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
		sp.SetSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, byte(i + 1)})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
			ev := sp.Events().AppendEmpty()
			ev.SetName("cache miss")
			ev.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		}
		sp.SetName(fmt.Sprintf("op-%d", i))
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_001_000_000 + int64(i)))
		sp.Attributes().PutStr("http.route", "/api/cart")
		sp.Attributes().PutInt("http.status_code", 200)
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		panic(err)
	}
	return b
}

// MetricsRequest is a metrics request of n data points: sums and histograms alternating.
func MetricsRequest(n int) []byte {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "api")
	sm := rm.ScopeMetrics().AppendEmpty()
	sum := sm.Metrics().AppendEmpty()
	sum.SetName("http.server.requests")
	s := sum.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	h := sm.Metrics().AppendEmpty()
	h.SetName("http.server.duration")
	hh := h.SetEmptyHistogram()
	hh.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range n {
		if i%2 == 0 {
			dp := s.DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
			dp.SetIntValue(int64(i))
			dp.Attributes().PutStr("route", fmt.Sprintf("/r%d", i))
		} else {
			dp := hh.DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
			dp.SetCount(10)
			dp.SetSum(55)
			dp.BucketCounts().FromRaw([]uint64{1, 2, 3, 4, 0})
			dp.ExplicitBounds().FromRaw([]float64{1, 5, 10, 50})
			dp.Attributes().PutStr("route", fmt.Sprintf("/r%d", i))
		}
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		panic(err)
	}
	return b
}

// LoadShaped returns what `otelbench load --pool-size 1024` sends of sig, in requests of n
// records: otlpgen's default records (log bodies of 128 bytes of words, 4 attributes a record,
// 5 services, traces of 5 spans), 1,024 distinct requests. Like the load, the pool repeats its
// records' times, so every time index takes them anywhere in its range; a benchmark of a live
// agent's advance moves each request's times past the previous one's (Payload.Stamp, as
// `otelbench load` does at each send), which makes those inserts appends. At 32d0f4d its logs
// cost the projector ~1.2 times LogsRequest's short ones, its spans ~1.6 times TracesRequest's
// (attributes, a trace per 5 spans).
func LoadShaped(sig signal.Signal, n int) []otlpgen.Payload {
	pool, err := otlpgen.NewPool(otlpgen.Config{Records: n, Attrs: otlpgen.DefaultAttrs,
		BodyBytes: otlpgen.DefaultBodyBytes, PoolSize: 1024, BaseTime: time.Unix(1_700_000_000, 0)}, sig)
	if err != nil {
		panic(err)
	}
	return pool.Payloads(sig)
}
