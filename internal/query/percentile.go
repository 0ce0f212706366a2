package query

import (
	"math"
)

// Histogram is one explicit-bucket histogram data point (OTLP
// HistogramDataPoint): Counts has len(Bounds)+1 entries; bucket i holds
// values in (Bounds[i-1], Bounds[i]], the last one (Bounds[n-1], +Inf).
// Min and Max are NaN when the producer did not record them.
type Histogram struct {
	Bounds   []float64
	Counts   []uint64
	Min, Max float64
}

// HistogramQuantile returns the q-quantile (0 ≤ q ≤ 1) estimated from the
// buckets by linear interpolation inside the bucket holding the rank, the
// way Prometheus' histogram_quantile does. The open first and last buckets
// are closed with Min/Max when known (else 0 when the first bound is
// positive, and the last finite bound). NaN when the histogram is empty or
// malformed.
func HistogramQuantile(q float64, h Histogram) float64 {
	n := len(h.Bounds)
	if len(h.Counts) != n+1 || math.IsNaN(q) || q < 0 || q > 1 {
		return math.NaN()
	}
	total := countSum(h.Counts)
	if total == 0 {
		return math.NaN()
	}
	s := rankSearch{rank: q * float64(total)}
	for i, c := range h.Counts {
		frac, ok := s.holds(c)
		if !ok {
			continue
		}
		var lo, hi float64
		switch {
		case i > 0:
			lo = h.Bounds[i-1]
		case !math.IsNaN(h.Min):
			lo = h.Min
		case n > 0 && h.Bounds[0] > 0:
			lo = 0
		case n > 0:
			lo = h.Bounds[0]
		}
		switch {
		case i < n:
			hi = h.Bounds[i]
		case !math.IsNaN(h.Max):
			hi = h.Max
		case n > 0:
			hi = h.Bounds[n-1]
		}
		lo, hi = clampBucket(lo, hi, h.Min, h.Max)
		return lo + (hi-lo)*frac
	}
	return hiOr(h.Max, h.Bounds) // q == 1 with trailing rounding
}

// countSum returns the sum of a histogram's bucket counts.
func countSum(counts []uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// rankSearch walks a histogram's buckets in ascending value order to the one holding a rank
// (q times the total count).
type rankSearch struct {
	rank float64
	cum  uint64 // the count of the buckets walked past
}

// holds reports whether the next bucket, of c values, holds the rank, and then how far into the
// bucket it lies (0 to 1); otherwise it walks past the bucket.
func (s *rankSearch) holds(c uint64) (frac float64, ok bool) {
	if c == 0 || float64(s.cum+c) < s.rank {
		s.cum += c
		return 0, false
	}
	return (s.rank - float64(s.cum)) / float64(c), true
}

func hiOr(maxV float64, bounds []float64) float64 {
	if !math.IsNaN(maxV) {
		return maxV
	}
	if len(bounds) > 0 {
		return bounds[len(bounds)-1]
	}
	return math.NaN()
}

// clampBucket narrows [lo, hi] to the recorded [minV, maxV] where known.
func clampBucket(lo, hi, minV, maxV float64) (float64, float64) {
	if !math.IsNaN(minV) && lo < minV {
		lo = minV
	}
	if !math.IsNaN(maxV) && hi > maxV {
		hi = maxV
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// ExpHistogram is one exponential histogram data point (OTLP
// ExponentialHistogramDataPoint). With base = 2^(2^-Scale), positive bucket
// index i (Pos[i-PosOffset]) holds values in (base^i, base^(i+1)], negative
// bucket i holds their negatives; ZeroCount values lie within
// ±ZeroThreshold. Min and Max are NaN when unknown.
type ExpHistogram struct {
	Scale         int32
	ZeroCount     uint64
	ZeroThreshold float64
	PosOffset     int32
	Pos           []uint64
	NegOffset     int32
	Neg           []uint64
	Min, Max      float64
}

// lowerBound returns base^index for the histogram's scale.
func (h ExpHistogram) lowerBound(index int32) float64 {
	return math.Exp2(float64(index) * math.Exp2(-float64(h.Scale)))
}

// ExpHistogramQuantile returns the q-quantile estimated from the buckets,
// interpolating geometrically inside a bucket (the buckets are exponential,
// so the midpoint in log space is the unbiased choice, as in Prometheus
// native histograms). Values in the zero bucket count as 0. NaN when empty.
func ExpHistogramQuantile(q float64, h ExpHistogram) float64 {
	if math.IsNaN(q) || q < 0 || q > 1 || h.Scale < -10 || h.Scale > 20 {
		return math.NaN()
	}
	total := h.ZeroCount + countSum(h.Pos) + countSum(h.Neg)
	if total == 0 {
		return math.NaN()
	}
	s := rankSearch{rank: q * float64(total)}
	// Ascending value order: the most negative bucket (highest index) first.
	for j := len(h.Neg) - 1; j >= 0; j-- {
		frac, ok := s.holds(h.Neg[j])
		if !ok {
			continue
		}
		idx := h.NegOffset + int32(j)
		lo, hi := h.lowerBound(idx), h.lowerBound(idx+1) // magnitudes
		v := -hi * math.Pow(lo/hi, frac)
		return clampValue(v, h.Min, h.Max)
	}
	if _, ok := s.holds(h.ZeroCount); ok {
		return clampValue(0, h.Min, h.Max)
	}
	for j, c := range h.Pos {
		frac, ok := s.holds(c)
		if !ok {
			continue
		}
		idx := h.PosOffset + int32(j)
		lo, hi := h.lowerBound(idx), h.lowerBound(idx+1)
		v := lo * math.Pow(hi/lo, frac)
		return clampValue(v, h.Min, h.Max)
	}
	if !math.IsNaN(h.Max) {
		return h.Max
	}
	return math.NaN()
}

func clampValue(v, minV, maxV float64) float64 {
	if !math.IsNaN(minV) && v < minV {
		return minV
	}
	if !math.IsNaN(maxV) && v > maxV {
		return maxV
	}
	return v
}
