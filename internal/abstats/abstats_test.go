package abstats

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name       string
		values     []float64
		wantCenter float64
		wantRange  string
	}{
		{"odd", []float64{5, 1, 3, 2, 4, 6, 7, 9, 8}, 5, "60%"},
		{"even", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, "64%"},
		{"constant", []float64{7, 7, 7, 7, 7, 7, 7}, 7, "0%"},
		{"too few for an interval", []float64{1, 2}, 1.5, "∞"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			s := Summarize(in, 0)
			if s.Center != tt.wantCenter {
				t.Errorf("center = %v, want %v", s.Center, tt.wantCenter)
			}
			if got := s.RangePct(); got != tt.wantRange {
				t.Errorf("RangePct = %q, want %q", got, tt.wantRange)
			}
			if s.N != len(tt.values) {
				t.Errorf("N = %d, want %d", s.N, len(tt.values))
			}
			for i := range in {
				if in[i] != tt.values[i] {
					t.Fatalf("Summarize reordered its input: %v", in)
				}
			}
		})
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		base      []float64
		head      []float64
		wantSig   bool
		wantDelta string
		wantP     float64 // exact U-test p-value for these sizes, 0 to skip
		wantWarn  bool
	}{
		// Complete separation of 5+5 values: p = 2/C(10,5) = 2/252.
		{"separated 5", []float64{10, 11, 12, 13, 14}, []float64{20, 21, 22, 23, 24}, true, "+83.33%", 2.0 / 252, false},
		// 4+4: p = 2/70 = 0.0286 < 0.05.
		{"separated 4", []float64{4, 3, 2, 1}, []float64{8, 7, 6, 5}, true, "+160.00%", 2.0 / 70, false},
		// 3+3 can never be significant: p >= 2/20.
		{"separated 3", []float64{1, 2, 3}, []float64{4, 5, 6}, false, "~", 0.1, true},
		{"interleaved", []float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, false, "~", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.base, tt.head, 0, 0)
			if c.Significant != tt.wantSig {
				t.Errorf("Significant = %v (p=%v), want %v", c.Significant, c.P, tt.wantSig)
			}
			if c.Delta != tt.wantDelta {
				t.Errorf("Delta = %q, want %q", c.Delta, tt.wantDelta)
			}
			if tt.wantP != 0 && math.Abs(c.P-tt.wantP) > 1e-9 {
				t.Errorf("P = %v, want %v", c.P, tt.wantP)
			}
			if got := len(c.Warnings) > 0; got != tt.wantWarn {
				t.Errorf("warnings = %q, want some: %v", c.Warnings, tt.wantWarn)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		name       string
		base, head float64
		want       float64
	}{
		{"equal", 3, 3, 1},
		{"both zero", 0, 0, 1},
		{"half", 10, 5, 0.5},
		{"from zero", 0, 2, math.Inf(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ratio(tt.base, tt.head); got != tt.want {
				t.Errorf("ratio(%v, %v) = %v, want %v", tt.base, tt.head, got, tt.want)
			}
		})
	}
}

func TestCanDetect(t *testing.T) {
	tests := []struct {
		n1, n2 int
		alpha  float64
		want   bool
	}{
		{0, 5, 0.05, false},
		{2, 2, 0.05, false},
		{3, 3, 0.05, false},
		{4, 4, 0.05, true},
		{3, 4, 0.05, false}, // best p is 2/C(7,3) = 0.057
		{5, 5, 0.01, true},
		{4, 4, 0.01, false},
	}
	for _, tt := range tests {
		if got := CanDetect(tt.n1, tt.n2, tt.alpha); got != tt.want {
			t.Errorf("CanDetect(%d, %d, %v) = %v, want %v", tt.n1, tt.n2, tt.alpha, got, tt.want)
		}
	}
	if got := MinSamples(0.05); got != 4 {
		t.Errorf("MinSamples(0.05) = %d, want 4", got)
	}
}

func TestMarshalJSON(t *testing.T) {
	c := Compare([]float64{0, 0}, []float64{1, 2}, 0, 0)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("marshal a comparison with an unbounded interval and a zero base: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["ratio"] != nil {
		t.Errorf("ratio = %v, want null", got["ratio"])
	}
	base := got["base"].(map[string]any)
	if base["ci_lo"] != nil || base["median"] != 0.0 || base["n"] != 2.0 {
		t.Errorf("base = %v, want ci_lo null, median 0, n 2", base)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := slices.Clone(tc.in)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("Median reordered its input: %v, was %v", tc.in, in)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
}
