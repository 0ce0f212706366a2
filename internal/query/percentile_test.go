package query

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func exactQuantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func TestHistogramQuantileSmall(t *testing.T) {
	// 10 values in (0,10], 10 in (10,20], none above: p50 is the top of the
	// first bucket, p75 the middle of the second.
	h := Histogram{Bounds: []float64{10, 20}, Counts: []uint64{10, 10, 0}, Min: math.NaN(), Max: math.NaN()}
	for _, tc := range []struct {
		name string
		q    float64
		want float64
	}{
		{"p50", 0.5, 10},
		{"p75", 0.75, 15},
		{"p100", 1, 20},
		{"p25", 0.25, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HistogramQuantile(tc.q, h); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if got := HistogramQuantile(0.5, Histogram{Bounds: []float64{1}, Counts: []uint64{0, 0}}); !math.IsNaN(got) {
		t.Errorf("empty: got %v, want NaN", got)
	}
	if got := HistogramQuantile(0.5, Histogram{Bounds: []float64{1}, Counts: []uint64{1}}); !math.IsNaN(got) {
		t.Errorf("malformed: got %v, want NaN", got)
	}
}

// TestQuantileKnownDistributions buckets samples from known distributions
// and checks the estimate lies within one bucket of the exact sample
// quantile (explicit) or within the bucket's relative width (exponential).
func TestQuantileKnownDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	dists := []struct {
		name string
		draw func() float64
	}{
		{"uniform0-1000", func() float64 { return rng.Float64() * 1000 }},
		{"exponential-mean100", func() float64 { return rng.ExpFloat64() * 100 }},
		{"lognormal", func() float64 { return math.Exp(rng.NormFloat64()*1.5 + 3) }},
	}
	bounds := []float64{}
	for b := 5.0; b <= 5000; b *= 1.25 {
		bounds = append(bounds, b)
	}
	const scale = 4
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			const n = 50000
			xs := make([]float64, n)
			h := Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1), Min: math.Inf(1), Max: math.Inf(-1)}
			eh := ExpHistogram{Scale: scale, PosOffset: -200, Pos: make([]uint64, 600), Min: math.Inf(1), Max: math.Inf(-1)}
			base := math.Exp2(math.Exp2(-scale))
			for i := range xs {
				x := d.draw()
				xs[i] = x
				h.Counts[sortSearch(bounds, x)]++
				h.Min, h.Max = math.Min(h.Min, x), math.Max(h.Max, x)
				idx := int32(math.Ceil(math.Log(x)/math.Log(base))) - 1 // (base^i, base^(i+1)]
				eh.Pos[idx-eh.PosOffset]++
			}
			eh.Min, eh.Max = h.Min, h.Max
			slices.Sort(xs)
			for _, q := range []float64{0.5, 0.9, 0.99} {
				want := exactQuantile(xs, q)
				got := HistogramQuantile(q, h)
				i := sortSearch(bounds, want)
				lo, hi := h.Min, h.Max
				if i > 0 {
					lo = bounds[i-1]
				}
				if i < len(bounds) {
					hi = bounds[i]
				}
				if width := hi - lo; math.Abs(got-want) > width {
					t.Errorf("explicit q=%v: got %v, want %v within %v", q, got, want, width)
				}
				egot := ExpHistogramQuantile(q, eh)
				if rel := math.Abs(egot-want) / want; rel > base-1 {
					t.Errorf("exponential q=%v: got %v, want %v within relative %v (got %v)", q, egot, want, base-1, rel)
				}
			}
		})
	}
}

// sortSearch returns the explicit bucket index of x: the first i with x <= bounds[i].
func sortSearch(bounds []float64, x float64) int {
	i, _ := slices.BinarySearch(bounds, x)
	return i
}

func TestExpHistogramQuantileSigns(t *testing.T) {
	// scale 0: base 2. Negative bucket 1 holds [-4,-2), zero bucket, positive bucket 1 holds (2,4].
	h := ExpHistogram{Scale: 0, ZeroCount: 2, NegOffset: 1, Neg: []uint64{4}, PosOffset: 1, Pos: []uint64{4}, Min: math.NaN(), Max: math.NaN()}
	for _, tc := range []struct {
		name   string
		q      float64
		lo, hi float64
	}{
		{"p10 negative", 0.1, -4, -2},
		{"p50 zero", 0.5, 0, 0},
		{"p90 positive", 0.9, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExpHistogramQuantile(tc.q, h)
			if got < tc.lo || got > tc.hi {
				t.Errorf("got %v, want in [%v, %v]", got, tc.lo, tc.hi)
			}
		})
	}
	if got := ExpHistogramQuantile(0.5, ExpHistogram{Min: math.NaN(), Max: math.NaN()}); !math.IsNaN(got) {
		t.Errorf("empty: got %v, want NaN", got)
	}
}
