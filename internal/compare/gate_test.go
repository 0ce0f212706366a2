package compare

import (
	"math"
	"testing"

	"github.com/otelbench/otelbench/internal/abstats"
)

func TestParseGate(t *testing.T) {
	tests := []struct {
		in      string
		want    Gate
		wantErr bool
	}{
		{"throughput:-5%", Gate{MetricThroughput, -0.05}, false},
		{"throughput:5%", Gate{MetricThroughput, -0.05}, false},
		{"p99:+10%", Gate{MetricP99, 0.10}, false},
		{"p99:10%", Gate{MetricP99, 0.10}, false},
		{"cpu: +5.5%", Gate{MetricCPU, 0.055}, false},
		{"errors:+0%", Gate{MetricErrors, 0}, false},
		{"throughput:+5%", Gate{}, true}, // an improvement, not a regression
		{"p99:-10%", Gate{}, true},
		{"p99:10", Gate{}, true},
		{"p99", Gate{}, true},
		{"latency:+10%", Gate{}, true},
		{"p99:abc%", Gate{}, true},
		{"p99:NaN%", Gate{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseGate(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseGate(%q) error = %v, want error: %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.Metric != tt.want.Metric || abs(got.Limit-tt.want.Limit) > 1e-12 {
				t.Errorf("ParseGate(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			back, err := ParseGate(got.String())
			if err != nil || back != got {
				t.Errorf("ParseGate(%q.String()=%q) = %+v, %v; want %+v", tt.in, got.String(), back, err, got)
			}
		})
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestGateEvaluate(t *testing.T) {
	tests := []struct {
		name     string
		gate     string
		sig      bool
		ratio    float64
		wantFail bool
	}{
		{"throughput drop beyond", "throughput:-5%", true, 0.90, true},
		{"throughput drop within", "throughput:-5%", true, 0.97, false},
		{"throughput drop not significant", "throughput:-5%", false, 0.50, false},
		{"throughput rise", "throughput:-5%", true, 1.50, false},
		{"p99 rise beyond", "p99:+10%", true, 1.25, true},
		{"p99 rise within", "p99:+10%", true, 1.05, false},
		{"p99 drop", "p99:+10%", true, 0.5, false},
		{"errors from zero", "errors:+0%", true, math.Inf(1), true},
		{"errors unchanged", "errors:+0%", true, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGate(tt.gate)
			if err != nil {
				t.Fatal(err)
			}
			r := g.Evaluate(abstats.Comparison{Significant: tt.sig, Ratio: tt.ratio})
			if r.Fail != tt.wantFail {
				t.Errorf("%s with significant=%v ratio=%v: fail = %v, want %v", tt.gate, tt.sig, tt.ratio, r.Fail, tt.wantFail)
			}
		})
	}
}
