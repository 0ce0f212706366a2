package otlpgen

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// histogramBounds are the semantic conventions' advisory bounds for
// http.server.request.duration (seconds), shortened.
var histogramBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// cumulativeStart is how long before the pool's base time a cumulative series started: the
// process start of the instance that reports it.
const cumulativeStart = time.Minute

// Series. A metrics payload is one export of one service instance: payload i reports instance
// i mod Services×Instances, and its points are distinct series (distinct attribute sets, see
// putSeriesAttrs), distinct from every other payload's too. Each series is therefore sent once
// per pool cycle, and Patch can advance it at every send: a cumulative counter grows by the
// same increment each cycle, as a process's counter does between exports.

// metrics returns payload number i of the pool. Data point j has type (j+i)%5, so a request of
// five or more points carries every type, and smaller requests rotate through the types across
// the pool. Sums and histograms have cfg.Temporality, except the non-monotonic sum (an
// up-down counter, cumulative in SDKs whatever the preference); gauges and summaries have none.
func (g *generator) metrics(i int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	instances := g.cfg.Services * g.cfg.Instances
	r := i % instances
	g.putResource(rm.Resource().Attributes(), resourceID{r % g.cfg.Services, r / g.cfg.Services})
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp")
	sm.Scope().SetVersion("0.63.0")

	var perKind [numKinds]int
	for j := range g.cfg.Records {
		perKind[(j+i)%numKinds]++
	}
	// series numbers u = group*stride + point index keep payloads of one instance apart.
	stride := g.cfg.Records/numKinds + 1
	group := i / instances
	temporality := pmetric.AggregationTemporalityCumulative
	if g.cfg.Temporality == TemporalityDelta {
		temporality = pmetric.AggregationTemporalityDelta
	}
	for kind, n := range perKind {
		if n == 0 {
			continue
		}
		m := sm.Metrics().AppendEmpty()
		attrs := func(j int, a pcommon.Map) {
			putSeriesAttrs(a, group*stride+j)
			g.putAttrs(a)
		}
		switch kind {
		case kindGauge:
			m.SetName("jvm.cpu.recent_utilization")
			m.SetUnit("1")
			dps := m.SetEmptyGauge().DataPoints()
			for j := range n {
				dp := dps.AppendEmpty()
				dp.SetTimestamp(g.ts(time.Duration(j) * time.Millisecond))
				dp.SetDoubleValue(0.05 + 0.5*g.rng.Float64())
				attrs(j, dp.Attributes())
			}
		case kindSum:
			g.sum(m, i%2 == 0, temporality, n, attrs)
		case kindHistogram:
			m.SetName("http.server.request.duration")
			m.SetUnit("s")
			h := m.SetEmptyHistogram()
			h.SetAggregationTemporality(temporality)
			for j := range n {
				dp := h.DataPoints().AppendEmpty()
				g.histogramPoint(dp, j, temporality)
				attrs(j, dp.Attributes())
			}
		case kindExpHistogram:
			m.SetName("rpc.server.duration")
			m.SetUnit("ms")
			h := m.SetEmptyExponentialHistogram()
			h.SetAggregationTemporality(temporality)
			for j := range n {
				dp := h.DataPoints().AppendEmpty()
				g.expHistogramPoint(dp, j, temporality)
				attrs(j, dp.Attributes())
			}
		case kindSummary:
			m.SetName("gc.pause")
			m.SetUnit("ms")
			dps := m.SetEmptySummary().DataPoints()
			for j := range n {
				dp := dps.AppendEmpty()
				g.summaryPoint(dp, j)
				attrs(j, dp.Attributes())
			}
		}
	}
	return md
}

// sum adds n points of a monotonic counter (with temporality t) or of an up-down counter
// (cumulative).
func (g *generator) sum(m pmetric.Metric, monotonic bool, t pmetric.AggregationTemporality, n int, attrs func(int, pcommon.Map)) {
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(monotonic)
	if monotonic {
		m.SetName("http.server.request.count")
		m.SetUnit("{request}")
		sum.SetAggregationTemporality(t)
	} else {
		m.SetName("http.server.active_requests")
		m.SetUnit("{request}")
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	}
	for j := range n {
		dp := sum.DataPoints().AppendEmpty()
		g.start(dp, j, sum.AggregationTemporality())
		switch {
		case !monotonic:
			dp.SetIntValue(int64(20 + g.rng.IntN(60)))
		case t == pmetric.AggregationTemporalityDelta:
			dp.SetIntValue(int64(1 + g.rng.IntN(100)))
		default:
			dp.SetIntValue(int64(1000 + j*10 + g.rng.IntN(10)))
		}
		attrs(j, dp.Attributes())
	}
}

// point is what the data points of every type have in common.
type point interface {
	SetStartTimestamp(pcommon.Timestamp)
	SetTimestamp(pcommon.Timestamp)
}

// start sets point j's time and start: a cumulative series started cumulativeStart before the
// base time, a delta point covers the ten seconds before its time.
func (g *generator) start(dp point, j int, t pmetric.AggregationTemporality) {
	at := time.Duration(j) * time.Millisecond
	dp.SetTimestamp(g.ts(at))
	if t == pmetric.AggregationTemporalityDelta {
		dp.SetStartTimestamp(g.ts(at - 10*time.Second))
	} else {
		dp.SetStartTimestamp(g.ts(-cumulativeStart))
	}
}

// putSeriesAttrs gives series number u its own set of HTTP attributes.
func putSeriesAttrs(m pcommon.Map, u int) {
	methods := [...]string{"GET", "POST", "PUT", "DELETE"}
	statuses := [...]int64{200, 201, 404, 500}
	m.PutStr("http.request.method", methods[u%len(methods)])
	u /= len(methods)
	route := httpRoutes[u%len(httpRoutes)]
	u /= len(httpRoutes)
	m.PutInt("http.response.status_code", statuses[u%len(statuses)])
	if u /= len(statuses); u > 0 {
		route = "/v" + strconv.Itoa(u+1) + route
	}
	m.PutStr("http.route", route)
	m.PutStr("url.scheme", "http")
}

// bucketMid is the value a histogram point's sum counts for one observation in bucket b.
func bucketMid(bounds []float64, b int) float64 {
	switch {
	case len(bounds) == 0:
		return 0
	case b == 0:
		return bounds[0] / 2
	case b >= len(bounds):
		return bounds[len(bounds)-1] * 1.5
	}
	return (bounds[b-1] + bounds[b]) / 2
}

func (g *generator) histogramPoint(dp pmetric.HistogramDataPoint, j int, t pmetric.AggregationTemporality) {
	g.start(dp, j, t)
	counts := make([]uint64, len(histogramBounds)+1)
	var total uint64
	var sum float64
	for b := range counts {
		counts[b] = uint64(1 + g.rng.IntN(20)) // a count of 0 would be left out of the encoding
		total += counts[b]
		sum += float64(counts[b]) * bucketMid(histogramBounds, b)
	}
	dp.BucketCounts().FromRaw(counts)
	dp.ExplicitBounds().FromRaw(histogramBounds)
	dp.SetCount(total)
	dp.SetSum(sum)
	// min and max bound every observation the point will ever count (Patch adds more).
	dp.SetMin(0)
	dp.SetMax(histogramBounds[len(histogramBounds)-1] * 2)
}

func (g *generator) expHistogramPoint(dp pmetric.ExponentialHistogramDataPoint, j int, t pmetric.AggregationTemporality) {
	g.start(dp, j, t)
	dp.SetScale(3)
	zero := uint64(1 + g.rng.IntN(3)) // never 0, which protobuf would leave out: Patch grows it
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
}

func (g *generator) summaryPoint(dp pmetric.SummaryDataPoint, j int) {
	g.start(dp, j, pmetric.AggregationTemporalityCumulative)
	count := uint64(100 + g.rng.IntN(100))
	dp.SetCount(count)
	dp.SetSum(float64(count) * 0.8)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		v := dp.QuantileValues().AppendEmpty()
		v.SetQuantile(q)
		v.SetValue(0.1 + q*4)
	}
}
