package abstats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Defaults shared with benchstat.
const (
	// DefaultAlpha is the significance level of the U test.
	DefaultAlpha = 0.05
	// DefaultConfidence is the confidence level of the median intervals.
	DefaultConfidence = 0.95
)

// Summary is the median of one side's sample with its confidence interval.
type Summary struct {
	Center float64 `json:"median"`
	Lo     float64 `json:"ci_lo"`
	Hi     float64 `json:"ci_hi"`
	// Confidence is the actual level of [Lo, Hi] (at least the one asked for).
	Confidence float64  `json:"confidence"`
	N          int      `json:"n"`
	Warnings   []string `json:"warnings,omitempty"`
}

// RangePct is benchstat's "± x%" figure: the larger distance from the median
// to an end of the interval, in percent of the median ("∞" when the interval
// is unbounded, "?" when it straddles zero).
func (s Summary) RangePct() string {
	return benchmath.Summary{Center: s.Center, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// Comparison is the result of comparing a head sample with a base sample.
type Comparison struct {
	Base Summary `json:"base"`
	Head Summary `json:"head"`
	// P is the p-value of the two-sided Mann–Whitney U test.
	P     float64 `json:"p"`
	Alpha float64 `json:"alpha"`
	// Significant reports P <= Alpha, benchstat's rule for printing a delta
	// instead of "~".
	Significant bool `json:"significant"`
	// Ratio is Head.Center / Base.Center (+Inf or NaN when the base is 0).
	Ratio float64 `json:"-"`
	// Delta is benchstat's delta cell: "~", "+12.34%", "0.00%" or "?".
	Delta string `json:"delta"`
	// Test is benchstat's "p=0.002 n=10" note.
	Test     string   `json:"test"`
	Warnings []string `json:"warnings,omitempty"`
}

// Change returns Ratio-1, the relative change of the medians.
func (c Comparison) Change() float64 { return c.Ratio - 1 }

// Median returns the median of values (the mean of the two middle ones for an even count), NaN
// for none. values is not modified.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(values))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summarize returns the median of values with its confidence interval at the
// given level (0 means DefaultConfidence). values is not modified.
func Summarize(values []float64, confidence float64) Summary {
	confidence = cmp.Or(confidence, DefaultConfidence)
	s := newSample(values, DefaultAlpha)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return Summary{
		Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence,
		N: len(values), Warnings: strs(sum.Warnings),
	}
}

// Compare summarizes base and head and tests whether they differ, at alpha
// and confidence (0 means the defaults). Neither slice is modified.
func Compare(base, head []float64, alpha, confidence float64) Comparison {
	alpha = cmp.Or(alpha, DefaultAlpha)
	sb, sh := newSample(base, alpha), newSample(head, alpha)
	cmp := benchmath.AssumeNothing.Compare(sb, sh)
	c := Comparison{
		Base:        Summarize(base, confidence),
		Head:        Summarize(head, confidence),
		P:           cmp.P,
		Alpha:       cmp.Alpha,
		Significant: cmp.P <= cmp.Alpha,
		Test:        cmp.String(),
		Warnings:    strs(cmp.Warnings),
	}
	c.Delta = cmp.FormatDelta(c.Base.Center, c.Head.Center)
	c.Ratio = ratio(c.Base.Center, c.Head.Center)
	return c
}

// CanDetect reports whether samples of n1 and n2 values can ever differ
// significantly at alpha: it asks benchmath to compare two samples that do
// not overlap at all, the most different samples of those sizes. With
// alpha 0.05 this needs at least 4 values per side.
func CanDetect(n1, n2 int, alpha float64) bool {
	if n1 < 1 || n2 < 1 {
		return false
	}
	alpha = cmp.Or(alpha, DefaultAlpha)
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	return benchmath.AssumeNothing.Compare(newSample(a, alpha), newSample(b, alpha)).P <= alpha
}

// MinSamples returns the smallest n such that n values per side can show a
// significant difference at alpha (0 if none up to 50).
func MinSamples(alpha float64) int {
	for n := 1; n <= 50; n++ {
		if CanDetect(n, n, alpha) {
			return n
		}
	}
	return 0
}

func newSample(values []float64, alpha float64) *benchmath.Sample {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	return benchmath.NewSample(slices.Clone(values), &th)
}

func ratio(base, head float64) float64 {
	switch {
	case base == head:
		return 1
	case base == 0:
		return math.Inf(int(math.Copysign(1, head)))
	}
	return head / base
}

func strs(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
