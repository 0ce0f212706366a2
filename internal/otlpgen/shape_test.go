package otlpgen

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// allSpans returns the spans of every resource of td, in order.
func allSpans(td ptrace.Traces) ptrace.SpanSlice {
	out := ptrace.NewSpanSlice()
	for r := range td.ResourceSpans().Len() {
		ss := td.ResourceSpans().At(r).ScopeSpans()
		for s := range ss.Len() {
			for i := range ss.At(s).Spans().Len() {
				ss.At(s).Spans().At(i).CopyTo(out.AppendEmpty())
			}
		}
	}
	return out
}

// consistent checks that every point of m adds up: histogram buckets to the count, their
// midpoints to the sum, exponential buckets and the zero count to the count.
func consistent(m pmetric.Metric) error {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		for i := range m.Histogram().DataPoints().Len() {
			dp := m.Histogram().DataPoints().At(i)
			var total uint64
			var sum float64
			bounds := dp.ExplicitBounds().AsRaw()
			for b, c := range dp.BucketCounts().AsRaw() {
				total += c
				sum += float64(c) * bucketMid(bounds, b)
			}
			if total != dp.Count() || dp.BucketCounts().Len() != len(bounds)+1 {
				return fmt.Errorf("%s point %d: buckets sum to %d, count %d", m.Name(), i, total, dp.Count())
			}
			if math.Abs(sum-dp.Sum()) > 1e-6*math.Max(1, sum) {
				return fmt.Errorf("%s point %d: sum %v, want %v from the buckets", m.Name(), i, dp.Sum(), sum)
			}
		}
	case pmetric.MetricTypeExponentialHistogram:
		for i := range m.ExponentialHistogram().DataPoints().Len() {
			dp := m.ExponentialHistogram().DataPoints().At(i)
			total := dp.ZeroCount()
			for _, c := range dp.Positive().BucketCounts().AsRaw() {
				total += c
			}
			if total != dp.Count() {
				return fmt.Errorf("%s point %d: buckets and zeros sum to %d, count %d", m.Name(), i, total, dp.Count())
			}
		}
	}
	return nil
}

// TestPatchIDs sends the traces of a pool twice over with ids on: every trace of every send has
// the id TraceID(run, base+n), none repeats, span ids are unique, every parent is a span of the
// same trace, and each trace has its spans.
func TestPatchIDs(t *testing.T) {
	for _, enc := range []Encoding{EncodingProto, EncodingJSON} {
		t.Run(string(enc), func(t *testing.T) { testPatchIDs(t, enc) })
	}
}

func testPatchIDs(t *testing.T, enc Encoding) {
	const run, per = 0xfeed, 7
	pool, err := NewPool(Config{Records: 30, SpansPerTrace: per, PoolSize: 3, BaseTime: base, Encoding: enc}, signal.Traces)
	if err != nil {
		t.Fatal(err)
	}
	traces := map[pcommon.TraceID]int{}
	spans := map[pcommon.SpanID]bool{}
	var base uint64
	for send := range 6 {
		p := pool.Get(signal.Traces, uint64(send))
		st := Stamp{IDs: true, RunID: run, TraceBase: base}
		req := ptraceotlp.NewExportRequest()
		un := req.UnmarshalProto
		if enc == EncodingJSON {
			un = req.UnmarshalJSON
		}
		if err := un(p.Patch(nil, &st)); err != nil {
			t.Fatal(err)
		}
		ss := allSpans(req.Traces())
		inTrace := map[pcommon.SpanID]pcommon.TraceID{}
		for i := range ss.Len() {
			inTrace[ss.At(i).SpanID()] = ss.At(i).TraceID()
		}
		for i := range ss.Len() {
			s := ss.At(i)
			traces[s.TraceID()]++
			if spans[s.SpanID()] {
				t.Errorf("send %d: span id %v repeats", send, s.SpanID())
			}
			spans[s.SpanID()] = true
			if p := s.ParentSpanID(); !p.IsEmpty() && inTrace[p] != s.TraceID() {
				t.Errorf("send %d: span %v has parent %v, not a span of its trace", send, s.SpanID(), p)
			}
		}
		for n := range p.Traces {
			if id := TraceID(run, base+uint64(n)); traces[id] == 0 {
				t.Errorf("send %d: trace %d has no spans under id %x", send, n, id)
			}
		}
		base += uint64(p.Traces)
	}
	if len(traces) != int(base) {
		t.Errorf("got %d distinct trace ids, want %d (one per trace sent)", len(traces), base)
	}
	for id, n := range traces {
		if n != per && n != 30%per {
			t.Errorf("trace %v has %d spans, want %d (or %d for the last of a payload)", id, n, per, 30%per)
		}
	}
}

// TestPatchLogTraceContext: a log record's trace context names a trace sent before it and a
// span that trace has.
func TestPatchLogTraceContext(t *testing.T) {
	for _, enc := range []Encoding{EncodingProto, EncodingJSON} {
		t.Run(string(enc), func(t *testing.T) { testPatchLogTraceContext(t, enc) })
	}
}

func testPatchLogTraceContext(t *testing.T, enc Encoding) {
	const run, sent, spans = 9, 50, 4
	pool, err := NewPool(Config{Records: 200, PoolSize: 1, BaseTime: base, LogTraceShare: 0.5, Encoding: enc}, signal.Logs)
	if err != nil {
		t.Fatal(err)
	}
	valid := map[[24]byte]bool{}
	for seq := range uint64(sent) {
		for k := range spans {
			tid, sid := TraceID(run, seq), SpanID(run, seq, k)
			valid[[24]byte(append(tid[:], sid[:]...))] = true
		}
	}
	req := plogotlp.NewExportRequest()
	p := pool.Get(signal.Logs, 0)
	un := req.UnmarshalProto
	if enc == EncodingJSON {
		un = req.UnmarshalJSON
	}
	if err := un(p.Patch(nil, &Stamp{IDs: true, RunID: run, SentTraces: sent, LogSpans: spans})); err != nil {
		t.Fatal(err)
	}
	recs := req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	with := 0
	for i := range recs.Len() {
		r := recs.At(i)
		if r.TraceID().IsEmpty() {
			continue
		}
		with++
		tid, sid := r.TraceID(), r.SpanID()
		if !valid[[24]byte(append(tid[:], sid[:]...))] {
			t.Errorf("log %d points at trace %v span %v, not one sent", i, tid, sid)
		}
	}
	if with < 60 || with > 140 {
		t.Errorf("%d of 200 logs carry a trace context, want about half", with)
	}
}

// TestPatchCountersAdvance decodes the metrics of passes 0..3 over a pool: every cumulative
// counter grows by the same increment each pass from a fixed start time, histograms and
// summaries stay consistent, gauges vary; with delta temporality nothing accumulates.
func TestPatchCountersAdvance(t *testing.T) {
	for _, temp := range []Temporality{TemporalityCumulative, TemporalityDelta} {
		t.Run(string(temp), func(t *testing.T) {
			pool, err := NewPool(Config{Records: 25, PoolSize: 2, BaseTime: base, Temporality: temp}, signal.Metrics)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pool.Payloads(signal.Metrics) {
				var prev map[string]float64
				var steps map[string]float64
				for pass := range uint64(4) {
					req := pmetricotlp.NewExportRequest()
					if err := req.UnmarshalProto(p.Patch(nil, &Stamp{Values: true, Pass: pass, Shift: int64(pass) * int64(time.Second)})); err != nil {
						t.Fatal(err)
					}
					cur := seriesValues(t, req.Metrics())
					for k, v := range cur {
						// Summaries are cumulative whatever the temporality of the others.
						cumulative := (temp == TemporalityCumulative || strings.HasPrefix(k, "summary")) &&
							!strings.HasPrefix(k, "gauge") && !strings.HasPrefix(k, "updown")
						switch {
						case prev == nil:
						case cumulative && pass == 1:
							if v <= prev[k] {
								t.Errorf("%s: %v after %v, want growth", k, v, prev[k])
							}
							steps[k] = v - prev[k]
						case cumulative:
							if d := v - prev[k]; math.Abs(d-steps[k]) > 1e-9*math.Max(1, v) {
								t.Errorf("%s: pass %d grew %v, want %v every pass", k, pass, d, steps[k])
							}
						case strings.HasPrefix(k, "gauge") || strings.HasPrefix(k, "updown"):
						default: // delta: the same increment each send
							if v != prev[k] {
								t.Errorf("%s: delta %v then %v, want the same", k, prev[k], v)
							}
						}
					}
					if pass > 0 && !varies(prev, cur, "gauge") {
						t.Error("gauges did not change between passes")
					}
					prev = cur
					if steps == nil {
						steps = map[string]float64{}
					}
				}
			}
		})
	}
}

func varies(a, b map[string]float64, prefix string) bool {
	for k, v := range a {
		if strings.HasPrefix(k, prefix) && b[k] != v {
			return true
		}
	}
	return false
}

// seriesValues returns the values of md by series: "sum/<attrs>/value", "hist/<attrs>/count"
// and so on, checking every point's consistency and that cumulative starts precede the base.
func seriesValues(t *testing.T, md pmetric.Metrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := range ms.Len() {
		m := ms.At(i)
		if err := consistent(m); err != nil {
			t.Error(err)
		}
		key := func(kind string, a pcommon.Map, j int) string {
			return fmt.Sprintf("%s/%s/%d/%v", kind, m.Name(), j, a.AsRaw())
		}
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			for j := range m.Gauge().DataPoints().Len() {
				dp := m.Gauge().DataPoints().At(j)
				out[key("gauge", dp.Attributes(), j)] = dp.DoubleValue()
			}
		case pmetric.MetricTypeSum:
			kind := "sum"
			if !m.Sum().IsMonotonic() {
				kind = "updown"
			}
			for j := range m.Sum().DataPoints().Len() {
				dp := m.Sum().DataPoints().At(j)
				out[key(kind, dp.Attributes(), j)] = float64(dp.IntValue())
				if m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityCumulative && dp.StartTimestamp().AsTime().After(base) {
					t.Errorf("%s: cumulative start %v after the pool's base time", m.Name(), dp.StartTimestamp().AsTime())
				}
			}
		case pmetric.MetricTypeHistogram:
			for j := range m.Histogram().DataPoints().Len() {
				dp := m.Histogram().DataPoints().At(j)
				out[key("hist-count", dp.Attributes(), j)] = float64(dp.Count())
				out[key("hist-sum", dp.Attributes(), j)] = dp.Sum()
			}
		case pmetric.MetricTypeExponentialHistogram:
			for j := range m.ExponentialHistogram().DataPoints().Len() {
				dp := m.ExponentialHistogram().DataPoints().At(j)
				out[key("exp-count", dp.Attributes(), j)] = float64(dp.Count())
			}
		case pmetric.MetricTypeSummary:
			for j := range m.Summary().DataPoints().Len() {
				dp := m.Summary().DataPoints().At(j)
				out[key("summary-count", dp.Attributes(), j)] = float64(dp.Count())
				out[key("summary-sum", dp.Attributes(), j)] = dp.Sum()
			}
		}
	}
	return out
}

// TestMetricSeriesDistinct: no two points of a pool are the same series, so each series is
// sent once per pool cycle and its counter can grow.
func TestMetricSeriesDistinct(t *testing.T) {
	pool, err := NewPool(Config{Records: 100, PoolSize: 16, Services: 2, Instances: 2, Attrs: 0, BaseTime: base}, signal.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, p := range pool.Payloads(signal.Metrics) {
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(p.Body); err != nil {
			t.Fatal(err)
		}
		rm := req.Metrics().ResourceMetrics().At(0)
		res := fmt.Sprint(rm.Resource().Attributes().AsRaw())
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := range ms.Len() {
			m := ms.At(j)
			forPoints(m, func(a pcommon.Map) {
				k := res + m.Name() + fmt.Sprint(a.AsRaw())
				if prev, dup := seen[k]; dup {
					t.Fatalf("payload %d repeats a series of payload %d: %s", i, prev, k)
				}
				seen[k] = i
			})
		}
	}
}

func forPoints(m pmetric.Metric, fn func(pcommon.Map)) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for i := range m.Gauge().DataPoints().Len() {
			fn(m.Gauge().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeSum:
		for i := range m.Sum().DataPoints().Len() {
			fn(m.Sum().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeHistogram:
		for i := range m.Histogram().DataPoints().Len() {
			fn(m.Histogram().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeExponentialHistogram:
		for i := range m.ExponentialHistogram().DataPoints().Len() {
			fn(m.ExponentialHistogram().DataPoints().At(i).Attributes())
		}
	case pmetric.MetricTypeSummary:
		for i := range m.Summary().DataPoints().Len() {
			fn(m.Summary().DataPoints().At(i).Attributes())
		}
	}
}

// TestTraceShapes: a trace starts at a SERVER span, crosses TraceServices services through
// CLIENT/SERVER pairs, has database, cache, messaging or internal leaves with the semantic
// conventions' attributes, and errors at about ErrorRate.
func TestTraceShapes(t *testing.T) {
	const per, traces = 10, 400
	pool, err := NewPool(Config{Records: per * 20, SpansPerTrace: per, TraceServices: 3, ErrorRate: 0.2, PoolSize: traces / 20, BaseTime: base}, signal.Traces)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	failed := 0
	for _, p := range pool.Payloads(signal.Traces) {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(p.Body); err != nil {
			t.Fatal(err)
		}
		type spanInfo struct {
			s       ptrace.Span
			service string
		}
		byID := map[pcommon.SpanID]spanInfo{}
		byTrace := map[pcommon.TraceID][]spanInfo{}
		rss := req.Traces().ResourceSpans()
		for r := range rss.Len() {
			svc, _ := rss.At(r).Resource().Attributes().Get("service.name")
			ss := rss.At(r).ScopeSpans().At(0).Spans()
			for i := range ss.Len() {
				si := spanInfo{ss.At(i), svc.Str()}
				byID[si.s.SpanID()] = si
				byTrace[si.s.TraceID()] = append(byTrace[si.s.TraceID()], si)
			}
		}
		for _, spans := range byTrace {
			services := map[string]bool{}
			isFailed := false
			for _, si := range spans {
				s := si.s
				services[si.service] = true
				a := s.Attributes()
				has := func(keys ...string) {
					for _, k := range keys {
						if _, ok := a.Get(k); !ok {
							t.Errorf("%s span %q lacks %s", s.Kind(), s.Name(), k)
						}
					}
				}
				isFailed = isFailed || s.Status().Code() == ptrace.StatusCodeError
				if s.ParentSpanID().IsEmpty() {
					if s.Kind() != ptrace.SpanKindServer {
						t.Errorf("root span %q is %s, want Server", s.Name(), s.Kind())
					}
					has("http.request.method", "url.path", "http.route", "http.response.status_code", "server.address")
					continue
				}
				parent := byID[s.ParentSpanID()]
				switch {
				case s.Kind() == ptrace.SpanKindServer:
					if parent.s.Kind() != ptrace.SpanKindClient || parent.service == si.service {
						t.Errorf("server span %q of %s has parent %s of %s, want a client span of another service", s.Name(), si.service, parent.s.Kind(), parent.service)
					}
					kinds["server"]++
				case s.Kind() == ptrace.SpanKindProducer:
					has("messaging.system", "messaging.destination.name", "messaging.operation.type")
					kinds["messaging"]++
				case s.Kind() == ptrace.SpanKindClient:
					if _, db := a.Get("db.system.name"); db {
						has("db.operation.name", "server.address")
						kinds["db"]++
					} else {
						has("http.request.method", "url.full", "server.address", "http.response.status_code")
						kinds["http client"]++
					}
				case s.Kind() == ptrace.SpanKindInternal:
					kinds["internal"]++
				}
			}
			if len(services) != 3 {
				t.Errorf("trace crosses %d services, want 3", len(services))
			}
			if isFailed {
				failed++
			}
		}
	}
	for _, k := range []string{"server", "http client", "db", "messaging", "internal"} {
		if kinds[k] == 0 {
			t.Errorf("no %s spans in %d traces: %v", k, traces, kinds)
		}
	}
	if failed < traces/10 || failed > traces*3/10 {
		t.Errorf("%d of %d traces failed, want about 20%%", failed, traces)
	}
}
