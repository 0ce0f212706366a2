package compare

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	"github.com/otelbench/otelbench/internal/abstats"
)

// DefaultPower is the probability with which a change of the detectable
// size shows as significant: 80%, the convention of power analysis.
const DefaultPower = 0.8

// MaxSuggestedRounds bounds the rounds a blind gate's advice may name;
// beyond it, less noise (a longer load, a quieter machine) is the cure.
const MaxSuggestedRounds = 50

// detectTrials returns the number of simulated comparisons behind one
// detectable-change factor: 5,000 for the usual few rounds (the 80th
// percentile of 5,000 draws is within about ±1% of its limit), fewer for
// many rounds, whose pairwise differences make each draw dearer, so that
// one factor costs at most a few million differences.
func detectTrials(n1, n2 int) int {
	return min(5000, max(1000, 2_000_000/(n1*n2)))
}

// Detectable returns the smallest relative change of the median that a
// comparison of n1 base and n2 head rounds detects with probability power
// at alpha, given the noise the rounds showed: the pooled standard
// deviation of the two samples, relative to the base median. It is +Inf
// when no change can ever be significant with so few rounds, and NaN when
// the base median is 0 (a relative change is then undefined).
//
// The factor that turns noise into a detectable change is found by
// simulating the very test compare runs (abstats' Mann–Whitney U test at
// these sizes and alpha) on normal noise, so the discreteness of small
// samples is counted: with 6 rounds a side at α=0.05 a change must be
// about 1.9 standard deviations to be seen 80% of the time.
func Detectable(base, head []float64, alpha, power float64) float64 {
	k := detectFactor(len(base), len(head), alpha, power)
	sd := pooledSD(base, head)
	if math.IsInf(k, 1) {
		return k
	}
	if sd == 0 {
		return 0
	}
	m := abstats.Median(base)
	if m == 0 {
		return math.NaN()
	}
	return k * sd / math.Abs(m)
}

// RoundsToDetect returns the smallest number of rounds per side at which a
// relative change of size limit would be detected with probability power,
// if the noise stays what base and head showed; 0 when more than
// MaxSuggestedRounds would be needed or the noise is unknown.
func RoundsToDetect(base, head []float64, limit, alpha, power float64) int {
	sd, m := pooledSD(base, head), abstats.Median(base)
	if m == 0 || limit == 0 {
		return 0
	}
	noise := sd / math.Abs(m)
	ok := func(n int) bool { return detectFactor(n, n, alpha, power)*noise <= math.Abs(limit) }
	if !ok(MaxSuggestedRounds) {
		return 0
	}
	lo := max(len(base), len(head), 1) // the factor falls as rounds grow
	return lo + sort.Search(MaxSuggestedRounds-lo, func(i int) bool { return ok(lo + i) })
}

// pooledSD is the within-sample standard deviation of base and head
// together, each around its own mean.
func pooledSD(base, head []float64) float64 {
	ss, dof := 0.0, -2
	for _, s := range [][]float64{base, head} {
		mean := 0.0
		for _, v := range s {
			mean += v
		}
		mean /= float64(len(s))
		for _, v := range s {
			ss += (v - mean) * (v - mean)
		}
		dof += len(s)
	}
	if dof <= 0 {
		return math.NaN()
	}
	return math.Sqrt(ss / float64(dof))
}

type detectKey struct {
	n1, n2       int
	alpha, power float64
}

var detectFactors sync.Map // detectKey -> float64; pure functions of the key

// detectFactor returns the shift, in standard deviations of normal noise,
// that the U test of n1 against n2 values at alpha finds significant with
// probability power (+Inf if it never can).
//
// The U statistic counts the pairs in which the head value exceeds the base
// value, and for samples without ties the test's p-value depends on U
// alone, so the test is significant upward exactly when U reaches a
// critical count u. Shifting the head by δ makes U the number of pairwise
// differences base−head below δ; a simulated pair of samples therefore
// becomes significant once δ exceeds its u-th smallest difference, and the
// power-quantile of that threshold over many draws is the factor.
func detectFactor(n1, n2 int, alpha, power float64) float64 {
	alpha = cmp.Or(alpha, abstats.DefaultAlpha)
	power = cmp.Or(power, DefaultPower)
	key := detectKey{n1, n2, alpha, power}
	if k, ok := detectFactors.Load(key); ok {
		return k.(float64)
	}
	k := math.Inf(1)
	if u := criticalU(n1, n2, alpha); u > 0 {
		rng := rand.New(rand.NewPCG(uint64(n1), uint64(n2))) // deterministic: same inputs, same figure
		x, y := make([]float64, n1), make([]float64, n2)
		diffs := make([]float64, n1*n2)
		thresholds := make([]float64, detectTrials(n1, n2))
		for t := range thresholds {
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			for j := range y {
				y[j] = rng.NormFloat64()
			}
			for i := range x {
				for j := range y {
					diffs[i*n2+j] = x[i] - y[j]
				}
			}
			slices.Sort(diffs)
			thresholds[t] = diffs[u-1]
		}
		slices.Sort(thresholds)
		k = thresholds[min(len(thresholds)-1, int(math.Ceil(power*float64(len(thresholds))))-1)]
	}
	detectFactors.Store(key, k)
	return k
}

// criticalU returns the smallest count u of (base, head) pairs with the head
// value above the base value at which the two-sided U test at alpha is
// significant, or 0 if no count is. It asks abstats itself, on samples
// built to have each count, so the figure follows the test compare runs.
func criticalU(n1, n2 int, alpha float64) int {
	if n1 < 1 || n2 < 1 {
		return 0
	}
	significant := func(u int) bool {
		base := make([]float64, n1)
		for i := range base {
			base[i] = float64(i)
		}
		// Head value j sits above c_j base values; the c_j add up to u, and a
		// small distinct offset keeps head values apart from each other.
		head := make([]float64, n2)
		left := u
		for j := range head {
			c := min(left, n1)
			left -= c
			head[j] = float64(c) - 0.5 + float64(j+1)/float64(4*n2)
		}
		return abstats.Compare(base, head, alpha, 0).Significant
	}
	total := n1 * n2
	if !significant(total) {
		return 0
	}
	// p grows as u falls towards the middle, where it is 1.
	mid := (total + 1) / 2
	return mid + sort.Search(total-mid, func(i int) bool { return significant(mid + i) })
}
