package query

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func TestMetricsAPI(t *testing.T) {
	e := newEnv(t, Config{})
	since := time.Now().Add(-30 * time.Minute).Truncate(time.Minute)
	at := func(s int) pcommon.Timestamp {
		return pcommon.NewTimestampFromTime(since.Add(time.Duration(s) * time.Second))
	}
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "api")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()

	h := ms.AppendEmpty()
	h.SetName("latency")
	h.SetUnit("ms")
	hh := h.SetEmptyHistogram()
	hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	for i, counts := range [][]uint64{{5, 5, 0, 0}, {0, 0, 10, 0}} {
		p := hh.DataPoints().AppendEmpty()
		p.SetTimestamp(at(10 + i))
		p.SetStartTimestamp(at(i))
		p.ExplicitBounds().FromRaw([]float64{10, 20, 50})
		p.BucketCounts().FromRaw(counts)
		var n uint64
		for _, c := range counts {
			n += c
		}
		p.SetCount(n)
		p.SetSum(float64(n) * 20)
	}

	g := ms.AppendEmpty()
	g.SetName("temperature")
	gp := g.SetEmptyGauge().DataPoints()
	for i, v := range []float64{10, 30} {
		dp := gp.AppendEmpty()
		dp.SetTimestamp(at(5 + i))
		dp.SetDoubleValue(v)
	}

	s := ms.AppendEmpty()
	s.SetName("requests")
	ss := s.SetEmptySum()
	ss.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	ss.SetIsMonotonic(true)
	for i, v := range []int64{100, 160, 220} { // one point per minute: +60 per minute = 1/s
		dp := ss.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(at(-600))
		dp.SetTimestamp(at(i * 60))
		dp.SetIntValue(v)
	}

	x := ms.AppendEmpty()
	x.SetName("size")
	xh := x.SetEmptyExponentialHistogram()
	xh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	xp := xh.DataPoints().AppendEmpty()
	xp.SetTimestamp(at(20))
	xp.SetScale(0)
	xp.Positive().SetOffset(3) // bucket 3: (8,16], bucket 4: (16,32]
	xp.Positive().BucketCounts().FromRaw([]uint64{2, 10})
	xp.SetCount(12)

	sm := ms.AppendEmpty()
	sm.SetName("rpc")
	sp := sm.SetEmptySummary().DataPoints().AppendEmpty()
	sp.SetTimestamp(at(30))
	sp.SetCount(100)
	sp.SetSum(700)
	for _, q := range [][2]float64{{0.5, 7}, {0.9, 9}, {0.99, 11}} {
		qv := sp.QuantileValues().AppendEmpty()
		qv.SetQuantile(q[0])
		qv.SetValue(q[1])
	}
	e.appendMetrics(t, md)
	e.waitProjected(t)

	var names struct{ Metrics []MetricName }
	getJSON(t, e.base+"/api/v1/metrics/names?service=api", http.StatusOK, &names)
	got := map[string]string{}
	for _, m := range names.Metrics {
		got[m.Name] = m.Type
	}
	want := map[string]string{"latency": "histogram", "temperature": "gauge", "requests": "sum", "size": "exponential_histogram", "rpc": "summary"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("names: got %v, want %v", got, want)
	}

	rng := "&since=" + url.QueryEscape(since.Format(time.RFC3339)) + "&until=" + url.QueryEscape(since.Add(5*time.Minute).Format(time.RFC3339)) + "&step=1m"
	series := func(q string) []SeriesPoint {
		t.Helper()
		var res SeriesResult
		getJSON(t, e.base+"/api/v1/metrics/series?"+q+rng, http.StatusOK, &res)
		if len(res.Series) != 1 {
			t.Fatalf("%s: got %d series, want 1", q, len(res.Series))
		}
		return res.Series[0].Points
	}
	near := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: got %v, want %v", name, deref(got), want)
		}
	}
	p := series("name=latency")
	if len(p) != 1 {
		t.Fatalf("latency: %d points, want 1 (both points in the first step)", len(p))
	}
	near("latency count", p[0].Count, 20)
	near("latency p50", p[0].P50, 20)
	near("latency p90", p[0].P90, 44)
	near("latency p99", p[0].P99, 49.4)

	near("temperature avg", series("name=temperature&agg=avg")[0].Value, 20)
	near("temperature max", series("name=temperature&agg=max")[0].Value, 30)

	r := series("name=requests&agg=rate")
	if len(r) != 3 {
		t.Fatalf("requests: %d points, want 3", len(r))
	}
	near("requests rate in step 2", r[1].Value, 1)
	near("requests rate in step 3", r[2].Value, 1)

	x0 := series("name=size")[0]
	if x0.P50 == nil || *x0.P50 <= 16 || *x0.P50 > 32 {
		t.Errorf("size p50: got %v, want in (16, 32]", deref(x0.P50))
	}
	near("rpc p90", series("name=rpc")[0].P90, 9)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
