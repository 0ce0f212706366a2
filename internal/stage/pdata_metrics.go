package stage

import (
	"encoding/binary"
	"hash/fnv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Metric type names stored in metrics.type.
const (
	metricGauge        = "gauge"
	metricSum          = "sum"
	metricHistogram    = "histogram"
	metricExpHistogram = "exponential_histogram"
	metricSummary      = "summary"
)

// metric stages a metric stream identity and returns its slice-local index.
func (st *Stage) metric(res, scope int, m pmetric.Metric, typ string, temporality int64, monotonic bool) int {
	return st.stageMetric(res, scope, m.Name(), m.Description(), m.Unit(), typ, temporality, monotonic)
}

// stageMetric stages a metric stream identity and returns its slice-local index. name,
// description and unit may be views of a payload: they are copied when kept.
func (st *Stage) stageMetric(res, scope int, name, description, unit, typ string, temporality int64, monotonic bool) int {
	h := fnv.New128a()
	h.Write(st.Resources[res].Hash[:])
	h.Write(st.Scopes[scope].Hash[:])
	for _, part := range []string{name, description, unit, typ} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var tail [9]byte
	binary.LittleEndian.PutUint64(tail[:8], uint64(temporality))
	if monotonic {
		tail[8] = 1
	}
	h.Write(tail[:])
	var key [16]byte
	h.Sum(key[:0])
	if i, ok := st.metricIdx[key]; ok {
		return i
	}
	st.Metrics = append(st.Metrics, MetricEntry{
		Hash: key, Res: res, Scope: scope, Name: strings.Clone(name), Description: strings.Clone(description),
		Unit: strings.Clone(unit), Typ: typ, Temporality: temporality, Monotonic: monotonic,
	})
	st.metricIdx[key] = len(st.Metrics) - 1
	return len(st.Metrics) - 1
}

func (st *Stage) head(metric int, rawID int64, attrs pcommon.Map, t, start pcommon.Timestamp, flags pmetric.DataPointFlags) pointHead {
	return pointHead{Metric: metric, RawID: rawID, Time: int64(t), Start: int64(start), Attrs: st.attrs(attrs), Flags: int64(flags)}
}

// optFloat returns f, or nil (SQL NULL) when the optional field is absent.
func optFloat(has bool, f float64) any {
	if !has {
		return nil
	}
	return f
}

// addMetrics stages md, decoded from the payload that rs describes (resCache.strip).
func (st *Stage) addMetrics(rawID int64, md pmetric.Metrics, rs *resStrip) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		res := st.resourceFor(rs, i, rm.Resource(), rm.SchemaUrl())
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			sm := sms.At(j)
			scope := st.scope(sm.Scope(), sm.SchemaUrl())
			ms := sm.Metrics()
			for k := range ms.Len() {
				st.addMetric(rawID, res, scope, ms.At(k))
			}
		}
	}
}

func (st *Stage) addMetric(rawID int64, res, scope int, m pmetric.Metric) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		id := st.metric(res, scope, m, metricGauge, 0, false)
		st.addNumbers(id, rawID, m.Gauge().DataPoints())
	case pmetric.MetricTypeSum:
		s := m.Sum()
		id := st.metric(res, scope, m, metricSum, int64(s.AggregationTemporality()), s.IsMonotonic())
		st.addNumbers(id, rawID, s.DataPoints())
	case pmetric.MetricTypeHistogram:
		h := m.Histogram()
		id := st.metric(res, scope, m, metricHistogram, int64(h.AggregationTemporality()), false)
		dps := h.DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			st.Hists = append(st.Hists, HistPoint{
				pointHead: st.head(id, rawID, dp.Attributes(), dp.Timestamp(), dp.StartTimestamp(), dp.Flags()),
				Count:     int64(dp.Count()),
				Sum:       optFloat(dp.HasSum(), dp.Sum()),
				Min:       optFloat(dp.HasMin(), dp.Min()),
				Max:       optFloat(dp.HasMax(), dp.Max()),
				Buckets:   st.json(func(b []byte) []byte { return appendJSONUint64s(b, dp.BucketCounts().AsRaw()) }),
				Bounds:    st.json(func(b []byte) []byte { return appendJSONFloat64s(b, dp.ExplicitBounds().AsRaw()) }),
			})
		}
	case pmetric.MetricTypeExponentialHistogram:
		h := m.ExponentialHistogram()
		id := st.metric(res, scope, m, metricExpHistogram, int64(h.AggregationTemporality()), false)
		dps := h.DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			pos, neg := dp.Positive(), dp.Negative()
			st.Exps = append(st.Exps, ExpHistPoint{
				pointHead:     st.head(id, rawID, dp.Attributes(), dp.Timestamp(), dp.StartTimestamp(), dp.Flags()),
				Count:         int64(dp.Count()),
				Sum:           optFloat(dp.HasSum(), dp.Sum()),
				Min:           optFloat(dp.HasMin(), dp.Min()),
				Max:           optFloat(dp.HasMax(), dp.Max()),
				Scale:         int64(dp.Scale()),
				ZeroCount:     int64(dp.ZeroCount()),
				ZeroThreshold: dp.ZeroThreshold(),
				PosOffset:     int64(pos.Offset()),
				PosBuckets:    st.json(func(b []byte) []byte { return appendJSONUint64s(b, pos.BucketCounts().AsRaw()) }),
				NegOffset:     int64(neg.Offset()),
				NegBuckets:    st.json(func(b []byte) []byte { return appendJSONUint64s(b, neg.BucketCounts().AsRaw()) }),
			})
		}
	case pmetric.MetricTypeSummary:
		id := st.metric(res, scope, m, metricSummary, 0, false)
		dps := m.Summary().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			qs := dp.QuantileValues()
			st.Sums = append(st.Sums, SummaryPoint{
				pointHead: st.head(id, rawID, dp.Attributes(), dp.Timestamp(), dp.StartTimestamp(), dp.Flags()),
				Count:     int64(dp.Count()),
				Sum:       dp.Sum(),
				Quantiles: st.json(func(b []byte) []byte {
					b = append(b, '[')
					for q := range qs.Len() {
						if q > 0 {
							b = append(b, ',')
						}
						b = appendJSONQuantile(b, qs.At(q).Quantile(), qs.At(q).Value())
					}
					return append(b, ']')
				}),
			})
		}
	}
}

func (st *Stage) addNumbers(metric int, rawID int64, dps pmetric.NumberDataPointSlice) {
	for i := range dps.Len() {
		dp := dps.At(i)
		p := NumberPoint{pointHead: st.head(metric, rawID, dp.Attributes(), dp.Timestamp(), dp.StartTimestamp(), dp.Flags())}
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			p.Vint = dp.IntValue()
		case pmetric.NumberDataPointValueTypeDouble:
			p.Vdouble = dp.DoubleValue()
		}
		st.Numbers = append(st.Numbers, p)
	}
}
