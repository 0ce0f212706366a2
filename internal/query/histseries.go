package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Histogram and exponential histogram series: points merged per step, cumulative points
// turned into their increase first.

// histAcc merges explicit-bucket histograms within a step.
type histAcc struct {
	bounds   []float64
	counts   []uint64
	count    uint64
	sum      float64
	min, max float64
}

func (a *histAcc) add(bounds []float64, counts []uint64, count uint64, sum, minV, maxV float64) bool {
	if a.counts == nil {
		a.bounds, a.counts = bounds, make([]uint64, len(counts))
		a.min, a.max = minV, maxV
	} else if !slices.Equal(a.bounds, bounds) || len(a.counts) != len(counts) {
		return false
	} else {
		a.min, a.max = nanMin(a.min, minV), nanMax(a.max, maxV)
	}
	for i, c := range counts {
		a.counts[i] += c
	}
	a.count += count
	a.sum += sum
	return true
}

func nanMin(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func nullFloat(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// histPoint is one stored histogram point reduced to what a step needs.
type cumState struct {
	start  int64
	counts []uint64
	count  uint64
	sum    float64
}

// deltaOf turns a cumulative point into the increase since the stream's
// previous point; ok is false for the first point of a stream that began
// before the range (its increase is unknown).
func deltaOf(prev map[string]*cumState, key string, start, since int64, counts []uint64, count uint64, sum float64) ([]uint64, uint64, float64, bool) {
	p := prev[key]
	prev[key] = &cumState{start: start, counts: counts, count: count, sum: sum}
	if p == nil {
		if start >= since && start > 0 {
			return counts, count, sum, true // the stream started inside the range
		}
		return nil, 0, 0, false
	}
	if p.start != start || count < p.count || len(p.counts) != len(counts) {
		return counts, count, sum, true // reset
	}
	d := make([]uint64, len(counts))
	for i := range counts {
		if counts[i] < p.counts[i] {
			return counts, count, sum, true
		}
		d[i] = counts[i] - p.counts[i]
	}
	return d, count - p.count, sum - p.sum, true
}

func (r *Reader) histogramSeries(ctx context.Context, q SeriesQuery, ms []metricStream, b *stepper) error {
	rows, err := r.queryPoints(ctx, "histogram_points", `metric_id, attributes, time_unix_nano, start_time_unix_nano, count,
		coalesce(sum, 0), min, max, bucket_counts, explicit_bounds`, ms, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	temp := temporalityOf(ms)
	prev := map[string]*cumState{}
	var cur int64 = -1
	var acc histAcc
	flush := func() {
		if cur >= 0 && acc.counts != nil {
			h := Histogram{Bounds: acc.bounds, Counts: acc.counts, Min: acc.min, Max: acc.max}
			b.points = append(b.points, histPoint(cur, acc.count, acc.sum,
				HistogramQuantile(0.5, h), HistogramQuantile(0.9, h), HistogramQuantile(0.99, h)))
		}
	}
	for rows.Next() {
		var id, t, start int64
		var count uint64
		var sum float64
		var minP, maxP *float64
		var attrs, countsJSON, boundsJSON string
		if err := rows.Scan(&id, &attrs, &t, &start, &count, &sum, &minP, &maxP, &countsJSON, &boundsJSON); err != nil {
			return fmt.Errorf("scan histogram point: %w", err)
		}
		var counts []uint64
		var bounds []float64
		if json.Unmarshal([]byte(countsJSON), &counts) != nil || json.Unmarshal([]byte(boundsJSON), &bounds) != nil ||
			(len(counts) != 0 && len(counts) != len(bounds)+1) {
			b.skipped++
			continue
		}
		if st := b.stepOf(t); st != cur {
			flush()
			cur, acc = st, histAcc{}
		}
		minV, maxV := nullFloat(minP), nullFloat(maxP)
		if temp[id] == 2 {
			var ok bool
			if counts, count, sum, ok = deltaOf(prev, fmt.Sprint(id, attrs), start, q.Since, counts, count, sum); !ok {
				continue
			}
			minV, maxV = math.NaN(), math.NaN() // lifetime extremes, not this step's
		}
		if len(counts) == 0 {
			continue
		}
		if !acc.add(bounds, counts, count, sum, minV, maxV) {
			b.skipped++
		}
	}
	flush()
	return rows.Err()
}

func histPoint(t int64, count uint64, sum, p50, p90, p99 float64) SeriesPoint {
	c := float64(count)
	return SeriesPoint{TimeUnixNano: t, Count: &c, Sum: clampNaN(sum), P50: clampNaN(p50), P90: clampNaN(p90), P99: clampNaN(p99)}
}

// expAcc merges exponential histograms at the lowest scale seen in a step.
type expAcc struct {
	set      bool
	scale    int32
	zero     uint64
	zeroThr  float64
	pos, neg map[int32]uint64
	count    uint64
	sum      float64
	min, max float64
}

func rescale(m map[int32]uint64, by int32) map[int32]uint64 {
	out := make(map[int32]uint64, len(m))
	for i, c := range m {
		out[i>>by] += c
	}
	return out
}

func (a *expAcc) add(scale int32, zero uint64, zeroThr float64, posOff int32, pos []uint64, negOff int32, neg []uint64, count uint64, sum, minV, maxV float64) {
	if !a.set {
		*a = expAcc{set: true, scale: scale, pos: map[int32]uint64{}, neg: map[int32]uint64{}, min: minV, max: maxV}
	} else {
		a.min, a.max = nanMin(a.min, minV), nanMax(a.max, maxV)
	}
	if scale < a.scale {
		a.pos, a.neg = rescale(a.pos, a.scale-scale), rescale(a.neg, a.scale-scale)
		a.scale = scale
	}
	shift := scale - a.scale
	for j, c := range pos {
		a.pos[(posOff+int32(j))>>shift] += c
	}
	for j, c := range neg {
		a.neg[(negOff+int32(j))>>shift] += c
	}
	a.fit()
	a.zero += zero
	a.zeroThr = math.Max(a.zeroThr, zeroThr)
	a.count += count
	a.sum += sum
}

func denseBuckets(m map[int32]uint64) (int32, []uint64) {
	if len(m) == 0 {
		return 0, nil
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range m {
		lo, hi = min(lo, i), max(hi, i)
	}
	if int64(hi)-int64(lo) > 1<<16 { // absurd spread; refuse rather than allocate
		return 0, nil
	}
	out := make([]uint64, hi-lo+1)
	for i, c := range m {
		out[i-lo] = c
	}
	return lo, out
}

func (a *expAcc) histogram() ExpHistogram {
	h := ExpHistogram{Scale: a.scale, ZeroCount: a.zero, ZeroThreshold: a.zeroThr, Min: a.min, Max: a.max}
	h.PosOffset, h.Pos = denseBuckets(a.pos)
	h.NegOffset, h.Neg = denseBuckets(a.neg)
	return h
}

func (r *Reader) expHistogramSeries(ctx context.Context, q SeriesQuery, ms []metricStream, b *stepper) error {
	rows, err := r.queryPoints(ctx, "exp_histogram_points", `metric_id, attributes, time_unix_nano, start_time_unix_nano, count,
		coalesce(sum, 0), min, max, scale, zero_count, zero_threshold, positive_offset, positive_buckets,
		negative_offset, negative_buckets`, ms, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	temp := temporalityOf(ms)
	prev := map[string]*cumState{}
	var cur int64 = -1
	var acc expAcc
	flush := func() {
		if cur >= 0 && acc.set {
			h := acc.histogram()
			b.points = append(b.points, histPoint(cur, acc.count, acc.sum,
				ExpHistogramQuantile(0.5, h), ExpHistogramQuantile(0.9, h), ExpHistogramQuantile(0.99, h)))
		}
	}
	for rows.Next() {
		var id, t, start int64
		var count, zero uint64
		var sum, zeroThr float64
		var minP, maxP *float64
		var scale, posOff, negOff int32
		var attrs, posJSON, negJSON string
		if err := rows.Scan(&id, &attrs, &t, &start, &count, &sum, &minP, &maxP, &scale, &zero, &zeroThr,
			&posOff, &posJSON, &negOff, &negJSON); err != nil {
			return fmt.Errorf("scan exponential histogram point: %w", err)
		}
		if scale < minExpScale || scale > 20 {
			b.skipped++
			continue
		}
		var pos, neg []uint64
		var ok bool
		if scale, posOff, pos, negOff, neg, ok = reduceExp(scale, posOff, posJSON, negOff, negJSON); !ok {
			b.skipped++
			continue
		}
		if st := b.stepOf(t); st != cur {
			flush()
			cur, acc = st, expAcc{}
		}
		minV, maxV := nullFloat(minP), nullFloat(maxP)
		if temp[id] == 2 {
			// Delta of a cumulative exp histogram: flatten zero, neg, pos into
			// one vector so deltaOf can diff it; a scale or offset change is a reset.
			key := fmt.Sprint(id, attrs, scale, posOff, negOff)
			flat := append(append([]uint64{zero}, neg...), pos...)
			d, c, s, ok := deltaOf(prev, key, start, q.Since, flat, count, sum)
			if !ok {
				continue
			}
			zero, neg, pos, count, sum = d[0], d[1:1+len(neg)], d[1+len(neg):], c, s
			minV, maxV = math.NaN(), math.NaN()
		}
		acc.add(scale, zero, zeroThr, posOff, pos, negOff, neg, count, sum, minV, maxV)
	}
	flush()
	return rows.Err()
}
