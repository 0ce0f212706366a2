package otlpgen

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// The five OTLP metric point types, assigned to data points round-robin.
const (
	kindGauge = iota
	kindSum
	kindHistogram
	kindExpHistogram
	kindSummary
	numKinds
)

var histogramBounds = []float64{5, 10, 25, 50, 100, 250, 500, 1000}

// metrics returns one request's worth of data points for one service
// resource. Data point i has type (i+offset)%5, so a request of five or more
// points carries every type, and smaller requests rotate through the types
// across the pool. Temporalities follow the SDK defaults for each instrument:
// the monotonic sum is a cumulative counter, the non-monotonic sum a
// cumulative up-down counter, histograms are delta, gauges and summaries have
// none.
func (g *generator) metrics(offset int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	g.putResource(rm.Resource().Attributes(), g.service())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("otelbench/otlpgen")
	sm.Scope().SetVersion("1")

	var perKind [numKinds]int
	for i := range g.cfg.Records {
		perKind[(i+offset)%numKinds]++
	}
	start := g.ts(-time.Minute)
	for kind, n := range perKind {
		if n == 0 {
			continue
		}
		m := sm.Metrics().AppendEmpty()
		switch kind {
		case kindGauge:
			m.SetName("system.memory.utilization")
			m.SetUnit("1")
			dps := m.SetEmptyGauge().DataPoints()
			for i := range n {
				dp := dps.AppendEmpty()
				dp.SetTimestamp(g.ts(time.Duration(i) * time.Millisecond))
				dp.SetDoubleValue(g.rng.Float64())
				g.putAttrs(dp.Attributes())
			}
		case kindSum:
			sum := m.SetEmptySum()
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			monotonic := offset%2 == 0
			sum.SetIsMonotonic(monotonic)
			if monotonic {
				m.SetName("http.server.request.count")
				m.SetUnit("{request}")
			} else {
				m.SetName("queue.size")
				m.SetUnit("{item}")
			}
			for i := range n {
				dp := sum.DataPoints().AppendEmpty()
				dp.SetStartTimestamp(start)
				dp.SetTimestamp(g.ts(time.Duration(i) * time.Millisecond))
				if monotonic {
					dp.SetIntValue(int64(1000 + i*10 + g.rng.IntN(10)))
				} else {
					dp.SetIntValue(int64(g.rng.IntN(200) - 100))
				}
				g.putAttrs(dp.Attributes())
			}
		case kindHistogram:
			m.SetName("http.server.request.duration")
			m.SetUnit("ms")
			h := m.SetEmptyHistogram()
			h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			for i := range n {
				g.histogramPoint(h.DataPoints().AppendEmpty(), i)
			}
		case kindExpHistogram:
			m.SetName("rpc.server.duration")
			m.SetUnit("ms")
			h := m.SetEmptyExponentialHistogram()
			h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			for i := range n {
				g.expHistogramPoint(h.DataPoints().AppendEmpty(), i)
			}
		case kindSummary:
			m.SetName("gc.pause")
			m.SetUnit("ms")
			dps := m.SetEmptySummary().DataPoints()
			for i := range n {
				g.summaryPoint(dps.AppendEmpty(), i)
			}
		}
	}
	return md
}

func (g *generator) histogramPoint(dp pmetric.HistogramDataPoint, i int) {
	dp.SetStartTimestamp(g.ts(time.Duration(i)*time.Millisecond - 10*time.Second))
	dp.SetTimestamp(g.ts(time.Duration(i) * time.Millisecond))
	counts := make([]uint64, len(histogramBounds)+1)
	var total uint64
	for b := range counts {
		counts[b] = uint64(g.rng.IntN(20))
		total += counts[b]
	}
	dp.BucketCounts().FromRaw(counts)
	dp.ExplicitBounds().FromRaw(histogramBounds)
	dp.SetCount(total)
	dp.SetSum(float64(total) * 42.5)
	if total > 0 {
		dp.SetMin(1)
		dp.SetMax(1500)
	}
	g.putAttrs(dp.Attributes())
}

func (g *generator) expHistogramPoint(dp pmetric.ExponentialHistogramDataPoint, i int) {
	dp.SetStartTimestamp(g.ts(time.Duration(i)*time.Millisecond - 10*time.Second))
	dp.SetTimestamp(g.ts(time.Duration(i) * time.Millisecond))
	dp.SetScale(3)
	zero := uint64(g.rng.IntN(3))
	dp.SetZeroCount(zero)
	counts := make([]uint64, 8)
	total := zero
	for b := range counts {
		counts[b] = uint64(g.rng.IntN(10))
		total += counts[b]
	}
	dp.Positive().SetOffset(int32(g.rng.IntN(16)))
	dp.Positive().BucketCounts().FromRaw(counts)
	dp.SetCount(total)
	dp.SetSum(float64(total) * 3.25)
	g.putAttrs(dp.Attributes())
}

func (g *generator) summaryPoint(dp pmetric.SummaryDataPoint, i int) {
	dp.SetStartTimestamp(g.ts(-time.Minute))
	dp.SetTimestamp(g.ts(time.Duration(i) * time.Millisecond))
	count := uint64(100 + g.rng.IntN(100))
	dp.SetCount(count)
	dp.SetSum(float64(count) * 0.8)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		v := dp.QuantileValues().AppendEmpty()
		v.SetQuantile(q)
		v.SetValue(0.1 + q*4)
	}
	g.putAttrs(dp.Attributes())
}
