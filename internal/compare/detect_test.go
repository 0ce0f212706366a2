package compare

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/abstats"
)

// noisy returns n values with mean center and a standard deviation of
// exactly sd (standardized normal draws), so tests know the noise.
func noisy(rng *rand.Rand, n int, center, sd float64) []float64 {
	z := make([]float64, n)
	mean := 0.0
	for i := range z {
		z[i] = rng.NormFloat64()
		mean += z[i]
	}
	mean /= float64(n)
	ss := 0.0
	for i := range z {
		z[i] -= mean
		ss += z[i] * z[i]
	}
	scale := sd / math.Sqrt(ss/float64(n-1))
	for i := range z {
		z[i] = center + z[i]*scale
	}
	return z
}

// TestDetectableHasItsPower checks the figure against the test it stands
// for: samples with a known noise and a true shift of the detectable
// change come out significant in abstats' U test about 80% of the time,
// and half that shift far less often.
func TestDetectableHasItsPower(t *testing.T) {
	const sd, trials = 5.0, 600 // noise 5% of a median of 100
	for _, n := range []int{6, 10} {
		k := detectFactor(n, n, 0.05, DefaultPower)
		rng := rand.New(rand.NewPCG(uint64(n), 99))
		power := func(shift float64) float64 {
			hits := 0
			for range trials {
				base, head := make([]float64, n), make([]float64, n)
				for i := range base {
					base[i] = 100 + sd*rng.NormFloat64()
					head[i] = 100 + shift + sd*rng.NormFloat64()
				}
				if c := abstats.Compare(base, head, 0.05, 0); c.Significant && c.Ratio > 1 {
					hits++
				}
			}
			return float64(hits) / trials
		}
		if got := power(k * sd); math.Abs(got-DefaultPower) > 0.06 {
			t.Errorf("n=%d: a true shift of the detectable %.2fσ was significant in %.0f%% of trials, want 80%% ± 6", n, k, 100*got)
		}
		if got := power(k * sd / 2); got > 0.45 {
			t.Errorf("n=%d: half the detectable shift was significant in %.0f%% of trials, want well under 80%%", n, 100*got)
		}
	}
}

// TestDetectFactorLargeSamples: for many rounds the factor approaches the
// normal theory of the U test, (z(1-α/2)+z(power))·√(2/n) over the square
// root of its efficiency 3/π against the t test.
func TestDetectFactorLargeSamples(t *testing.T) {
	for _, n := range []int{20, 30} {
		want := (1.959964 + 0.841621) * math.Sqrt(2*math.Pi/(3*float64(n)))
		if got := detectFactor(n, n, 0.05, 0.8); math.Abs(got/want-1) > 0.05 {
			t.Errorf("n=%d: got factor %.3f, want %.3f ± 5%% (normal theory)", n, got, want)
		}
	}
}

func TestDetectableFromSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	six := detectFactor(6, 6, 0.05, DefaultPower)
	tests := []struct {
		name       string
		base, head []float64
		want       float64 // NaN: want NaN
	}{
		{"5% noise", noisy(rng, 6, 200, 10), noisy(rng, 6, 200, 10), six * 10 / 200},
		{"noise from both sides pooled", noisy(rng, 6, 100, 3), noisy(rng, 6, 130, 4), six * math.Sqrt((9+16)/2.0) / 100},
		{"no noise sees any change", []float64{5, 5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5, 5}, 0},
		{"too few rounds see nothing", noisy(rng, 3, 100, 1), noisy(rng, 3, 100, 1), math.Inf(1)},
		{"zero base median is unknown", []float64{0, 0, 0, 0, 1, 0}, []float64{0, 2, 0, 0, 0, 0}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detectable(tt.base, tt.head, 0.05, DefaultPower)
			m := abstats.Median(tt.base)
			if m != 0 && !math.IsInf(tt.want, 1) {
				tt.want = tt.want * abstats.Median(tt.base) / m // relative to the sample median, which noisy() leaves near center
			}
			switch {
			case math.IsNaN(tt.want):
				if !math.IsNaN(got) {
					t.Errorf("got %v, want NaN", got)
				}
			case math.IsInf(tt.want, 1):
				if !math.IsInf(got, 1) {
					t.Errorf("got %v, want +Inf", got)
				}
			default:
				// noisy() fixes the mean, not the median: allow the median's drift.
				if math.Abs(got-tt.want) > 0.05*tt.want+1e-12 {
					t.Errorf("got %.4f, want %.4f", got, tt.want)
				}
			}
		})
	}
}

func TestRoundsToDetect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base, head := noisy(rng, 6, 100, 10), noisy(rng, 6, 100, 10)
	noise := pooledSD(base, head) / abstats.Median(base)
	for _, limit := range []float64{0.10, 0.15, -0.12} {
		n := RoundsToDetect(base, head, limit, 0.05, DefaultPower)
		if n == 0 {
			t.Fatalf("limit %v: got no suggestion", limit)
		}
		if got := detectFactor(n, n, 0.05, DefaultPower) * noise; got > math.Abs(limit) {
			t.Errorf("limit %v: %d rounds detect only ±%.3f", limit, n, got)
		}
		if got := detectFactor(n-1, n-1, 0.05, DefaultPower) * noise; got <= math.Abs(limit) {
			t.Errorf("limit %v: %d rounds suggested, but %d already detect ±%.3f", limit, n, n-1, got)
		}
	}
	if n := RoundsToDetect(base, head, 0.001, 0.05, DefaultPower); n != 0 {
		t.Errorf("a 0.1%% change in 10%% noise: got %d rounds, want 0 (beyond %d)", n, MaxSuggestedRounds)
	}
}

// roundsOf builds a finished report of n rounds per side whose metrics
// carry the given relative noise around the same medians on both sides.
func roundsOf(t *testing.T, n int, noise map[string]float64, head map[string]float64, gates []Gate, allow []string) *Report {
	t.Helper()
	c := Config{Base: "a", Head: "b", Rounds: n, Gates: gates, AllowBlind: allow}
	c = c.withDefaults()
	rep := newReport(c)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2 * n {
		side, shift := "base", 1.0
		if i%2 == 1 {
			side = "head"
		}
		m := map[string]float64{}
		for _, met := range Metrics(false) {
			if side == "head" && head[met.Key] != 0 {
				shift = 1 + head[met.Key]
			} else {
				shift = 1
			}
			m[met.Key] = 1000 * shift * (1 + noise[met.Key]*rng.NormFloat64())
		}
		rep.Runs = append(rep.Runs, RunSample{Seq: i, Side: side, Round: i / 2, Metrics: m})
	}
	rep.finish(c)
	return rep
}

func TestBlindGates(t *testing.T) {
	gates := []Gate{{MetricThroughput, -0.40}, {MetricP99, 0.10}}
	tests := []struct {
		name      string
		rounds    int
		noise     map[string]float64
		head      map[string]float64
		allow     []string
		wantExit  int
		wantBlind []string
		beyond    bool   // the blind gate needs more than MaxSuggestedRounds
		headline  string // part of the verdict line
	}{
		{name: "quiet enough for every limit", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.02}, wantExit: ExitPass, headline: "pass: no gate failed"},
		{name: "p99 too noisy for +10%", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.10},
			wantExit: ExitInconclusive, wantBlind: []string{MetricP99}, headline: "gate p99:+10% cannot see a change of its limit"},
		{name: "p99 blind but allowed", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.10},
			allow: []string{MetricP99}, wantExit: ExitPass, wantBlind: []string{MetricP99}, headline: "blind gates were allowed: p99:+10% (sees ±"},
		{name: "all blind gates allowed", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.10},
			allow: []string{AllowBlindAll}, wantExit: ExitPass, wantBlind: []string{MetricP99}},
		{name: "allowing another metric does not excuse p99", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.10},
			allow: []string{MetricCPU}, wantExit: ExitInconclusive, wantBlind: []string{MetricP99}},
		{name: "a seen regression still fails", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.10},
			head: map[string]float64{MetricThroughput: -0.5}, wantExit: ExitRegression, wantBlind: []string{MetricP99}},
		{name: "no number of rounds would do", rounds: 6, noise: map[string]float64{MetricThroughput: 0.02, MetricP99: 0.40},
			wantExit: ExitInconclusive, wantBlind: []string{MetricP99}, beyond: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := roundsOf(t, tt.rounds, tt.noise, tt.head, gates, tt.allow)
			if rep.ExitCode != tt.wantExit {
				t.Errorf("got exit %d (%s), want %d", rep.ExitCode, rep.Verdict, tt.wantExit)
			}
			if h := rep.headline(); !strings.Contains(h, tt.headline) {
				t.Errorf("got verdict %q, want it to say %q", h, tt.headline)
			}
			var blind []string
			for _, g := range rep.Gates {
				if g.Blind {
					blind = append(blind, g.Metric)
					if tt.beyond && g.SuggestRounds != 0 {
						t.Errorf("%s: got suggestion of %d rounds, want none (more than %d)", g.Gate, g.SuggestRounds, MaxSuggestedRounds)
					}
					if !tt.beyond && g.SuggestRounds <= tt.rounds {
						t.Errorf("%s: got suggestion of %d rounds, want more than %d", g.Gate, g.SuggestRounds, tt.rounds)
					}
				}
				if g.Metric == MetricP99 && !(g.Detectable > 0) {
					t.Errorf("%s: got detectable %v, want a positive figure", g.Gate, g.Detectable)
				}
			}
			if len(blind) != len(tt.wantBlind) || (len(blind) > 0 && blind[0] != tt.wantBlind[0]) {
				t.Errorf("got blind gates %v, want %v", blind, tt.wantBlind)
			}
		})
	}
}

// TestDetectableJSON: a figure JSON cannot hold (±∞ with too few rounds)
// is written as null, and a finite one as a number.
func TestDetectableJSON(t *testing.T) {
	for _, tt := range []struct {
		rounds   int
		wantNull bool
	}{{3, true}, {6, false}} {
		rep := roundsOf(t, tt.rounds, map[string]float64{MetricThroughput: 0.05, MetricP99: 0.05}, nil, []Gate{{MetricThroughput, -0.40}}, nil)
		var b strings.Builder
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatalf("%d rounds: %v", tt.rounds, err)
		}
		var back struct {
			Results []struct {
				Detectable *float64 `json:"detectable"`
			} `json:"results"`
			Gates []struct {
				Detectable *float64 `json:"detectable"`
				Blind      bool     `json:"blind"`
			} `json:"gates"`
		}
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Results[0].Detectable == nil; got != tt.wantNull {
			t.Errorf("%d rounds: got detectable %v, want null: %v", tt.rounds, back.Results[0].Detectable, tt.wantNull)
		}
		if got := back.Gates[0].Detectable == nil; got != tt.wantNull || back.Gates[0].Blind != tt.wantNull {
			t.Errorf("%d rounds: gate detectable %v blind %v, want null and blind: %v", tt.rounds, back.Gates[0].Detectable, back.Gates[0].Blind, tt.wantNull)
		}
	}
}
