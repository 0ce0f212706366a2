// Package otlptest builds OTLP export requests for tests and benchmarks:
// deterministic, with every metric type, and optionally with records that the
// ingest server's validation rejects.
package otlptest

import (
	"encoding/binary"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// base is a fixed timestamp so that requests are reproducible.
var base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func resource(r pcommon.Resource, service string) {
	r.Attributes().PutStr("service.name", service)
	r.Attributes().PutStr("host.name", "bench-host")
}

// TraceID returns a deterministic non-zero trace ID for seq.
func TraceID(seq uint64) pcommon.TraceID {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], 0x0af7651916cd43dd)
	binary.BigEndian.PutUint64(id[8:], seq+1)
	return id
}

// SpanID returns a deterministic non-zero span ID for seq.
func SpanID(seq uint64) pcommon.SpanID {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], seq+1)
	return id
}

// Logs returns a request with n log records, numbered from seq.
func Logs(seq uint64, n int) plogotlp.ExportRequest {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	resource(rl.Resource(), "checkout")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("otelbench/otlptest")
	for i := range n {
		s := seq + uint64(i)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(s) * time.Millisecond)))
		lr.SetObservedTimestamp(lr.Timestamp())
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("order %d placed by user-%d in 42ms", s, s%97))
		lr.Attributes().PutInt("seq", int64(s))
		lr.SetTraceID(TraceID(s))
		lr.SetSpanID(SpanID(s))
	}
	return plogotlp.NewExportRequestFromLogs(ld)
}

// Traces returns a request with n valid spans numbered from seq, followed by
// invalid spans (zero trace or span ID) that validation rejects.
func Traces(seq uint64, n, invalid int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	resource(rs.Resource(), "frontend")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("otelbench/otlptest")
	for i := range n + invalid {
		s := seq + uint64(i)
		sp := ss.Spans().AppendEmpty()
		sp.SetName(fmt.Sprintf("GET /api/orders/%d", s%10))
		sp.SetKind(ptrace.SpanKindServer)
		start := base.Add(time.Duration(s) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(3 * time.Millisecond)))
		sp.Attributes().PutInt("seq", int64(s))
		sp.Status().SetCode(ptrace.StatusCodeOk)
		if i < n {
			sp.SetTraceID(TraceID(s / 4)) // four spans per trace
			sp.SetSpanID(SpanID(s))
			ev := sp.Events().AppendEmpty()
			ev.SetName("cache.miss")
			ev.SetTimestamp(sp.StartTimestamp())
		} else if i%2 == 0 {
			sp.SetSpanID(SpanID(s)) // zero trace ID
		} else {
			sp.SetTraceID(TraceID(s)) // zero span ID
		}
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

// MetricTypes lists the five metric data types, in the order Metrics uses them.
var MetricTypes = []pmetric.MetricType{
	pmetric.MetricTypeGauge, pmetric.MetricTypeSum, pmetric.MetricTypeHistogram,
	pmetric.MetricTypeExponentialHistogram, pmetric.MetricTypeSummary,
}

// Metrics returns a request with n data points numbered from seq, spread
// round-robin over one metric of each of the five types, followed by
// invalid metrics (one point each: no name, or no data) that validation
// rejects. types restricts the types used (nil means all five).
func Metrics(seq uint64, n, invalid int, types ...pmetric.MetricType) pmetricotlp.ExportRequest {
	if len(types) == 0 {
		types = MetricTypes
	}
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	resource(rm.Resource(), "payments")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("otelbench/otlptest")
	metrics := make([]pmetric.Metric, len(types))
	for i, t := range types {
		m := sm.Metrics().AppendEmpty()
		m.SetName("otelbench.test." + t.String())
		m.SetUnit("ms")
		switch t {
		case pmetric.MetricTypeGauge:
			m.SetEmptyGauge()
		case pmetric.MetricTypeSum:
			m.SetEmptySum().SetIsMonotonic(true)
			m.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		case pmetric.MetricTypeHistogram:
			m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		case pmetric.MetricTypeExponentialHistogram:
			m.SetEmptyExponentialHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		case pmetric.MetricTypeSummary:
			m.SetEmptySummary()
		}
		metrics[i] = m
	}
	for i := range n {
		s := seq + uint64(i)
		addPoint(metrics[i%len(metrics)], s)
	}
	for i := range invalid {
		s := seq + uint64(n+i)
		m := sm.Metrics().AppendEmpty()
		if i%2 == 0 { // a gauge point without a metric name
			m.SetEmptyGauge()
			addPoint(m, s)
		} else { // a named metric without data
			m.SetName("otelbench.test.nodata")
		}
	}
	return pmetricotlp.NewExportRequestFromMetrics(md)
}

func addPoint(m pmetric.Metric, s uint64) {
	ts := pcommon.NewTimestampFromTime(base.Add(time.Duration(s) * time.Second))
	v := float64(s%1000) + 0.5
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dp := m.Gauge().DataPoints().AppendEmpty()
		stamp(dp, ts, s)
		dp.SetDoubleValue(v)
	case pmetric.MetricTypeSum:
		dp := m.Sum().DataPoints().AppendEmpty()
		stamp(dp, ts, s)
		dp.SetIntValue(int64(s))
	case pmetric.MetricTypeHistogram:
		dp := m.Histogram().DataPoints().AppendEmpty()
		stamp(dp, ts, s)
		dp.SetCount(3)
		dp.SetSum(3 * v)
		dp.ExplicitBounds().FromRaw([]float64{1, 10, 100})
		dp.BucketCounts().FromRaw([]uint64{0, 1, 1, 1})
	case pmetric.MetricTypeExponentialHistogram:
		dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
		stamp(dp, ts, s)
		dp.SetScale(2)
		dp.SetCount(4)
		dp.SetSum(4 * v)
		dp.SetZeroCount(1)
		dp.Positive().SetOffset(1)
		dp.Positive().BucketCounts().FromRaw([]uint64{1, 2})
	case pmetric.MetricTypeSummary:
		dp := m.Summary().DataPoints().AppendEmpty()
		stamp(dp, ts, s)
		dp.SetCount(2)
		dp.SetSum(2 * v)
		q := dp.QuantileValues().AppendEmpty()
		q.SetQuantile(0.5)
		q.SetValue(v)
	}
}

// dataPoint is what the data points of every metric type have in common.
type dataPoint interface {
	SetTimestamp(pcommon.Timestamp)
	Attributes() pcommon.Map
}

// stamp gives dp the time and the "seq" attribute of point s.
func stamp(dp dataPoint, ts pcommon.Timestamp, s uint64) {
	dp.SetTimestamp(ts)
	dp.Attributes().PutInt("seq", int64(s))
}
