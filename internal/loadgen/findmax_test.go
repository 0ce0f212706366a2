package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// capacityServer answers 200 while a token bucket of rate tokens per second (burst tokens)
// has one, and 503 otherwise: a server with a known capacity.
func capacityServer(t *testing.T, rate, burst float64) *httptest.Server {
	var mu sync.Mutex
	tokens, last := burst, time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		now := time.Now()
		tokens = min(burst, tokens+now.Sub(last).Seconds()*rate)
		last = now
		ok := tokens >= 1
		if ok {
			tokens--
		}
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFindMaxKnownCapacity searches a server that takes 165 requests per second: the steps
// grow fourfold from 12.5 while they pass (12.5, 50), 200 fails on errors (about a tenth of
// its requests find no token; the bucket holds 0.3 s of burst for a stalled generator), the
// bisection's 125 passes, so the highest sustainable rate is 125, and every step is in the
// report. The margins (125 is 76% of the capacity, 200 is 121%), the low rates and the loose
// p99 bound keep the verdicts clear of a busy machine's jitter, race detector included.
func TestFindMaxKnownCapacity(t *testing.T) {
	srv := capacityServer(t, 165, 50)
	rep, err := FindMax(context.Background(), Config{Endpoint: srv.URL, Concurrency: 64, Payload: otlpgen.Config{Records: 1, PoolSize: 2}},
		FindMaxConfig{SLO: SLO{P99: 2 * time.Second, ErrorRate: 0.03}, Start: 12.5, Factor: 4, StepDuration: 3 * time.Second, Refine: 1})
	if err != nil {
		t.Fatal(err)
	}
	fm := rep.FindMax
	if fm == nil {
		t.Fatal("no find_max in the report")
	}
	var rates []float64
	var verdicts []bool
	for _, s := range fm.Steps {
		rates, verdicts = append(rates, s.Rate), append(verdicts, s.Pass)
	}
	wantRates, wantVerdicts := []float64{12.5, 50, 200, 125}, []bool{true, true, false, true}
	if !slices.Equal(rates, wantRates) || !slices.Equal(verdicts, wantVerdicts) {
		t.Fatalf("steps at %v passed %v; want %v passing %v (steps %+v)", rates, verdicts, wantRates, wantVerdicts, fm.Steps)
	}
	if fm.MaxSustainable != 125 || rep.Config.Rate != 125 {
		t.Errorf("max sustainable %v, report of the step at %v; want 125 and 125", fm.MaxSustainable, rep.Config.Rate)
	}
	if fail := fm.Steps[2]; fail.ErrorRate <= 0.03 || fail.Reason == "" {
		t.Errorf("the 400 req/s step: error rate %v, reason %q; want over 2%% with a reason", fail.ErrorRate, fail.Reason)
	}
}

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in   string
		want SLO
		ok   bool
	}{
		{"p99=50ms,errors=0.1%", SLO{50 * time.Millisecond, 0.001}, true},
		{"p99=2s", SLO{2 * time.Second, DefaultSLO.ErrorRate}, true},
		{"errors=5", SLO{DefaultSLO.P99, 0.05}, true},
		{"p99=-1s", SLO{}, false},
		{"errors=101%", SLO{}, false},
		{"p50=1ms", SLO{}, false},
		{"p99", SLO{}, false},
	}
	for _, tt := range tests {
		got, err := ParseSLO(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestStagesRunOnFakeClock runs "1s:200,2s:200,1s:0" against a real server with the fake
// clock: the run sends exactly the schedule's 600 requests, each at its intended time (no
// late sends), and stops at its end.
func TestStagesRunOnFakeClock(t *testing.T) {
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer srv.Close()
	stages, err := ParseStages("1s:200,2s:200,1s:0")
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rep, err := Run(context.Background(), Config{Endpoint: srv.URL, Stages: stages, Clock: clock, Concurrency: 1,
		Payload: otlpgen.Config{Records: 1, PoolSize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Requests != 600 || got.Load() != 600 || rep.Totals.LateSends != 0 {
		t.Errorf("requests %d (server saw %d), late %d; want 600, 600, 0", rep.Totals.Requests, got.Load(), rep.Totals.LateSends)
	}
	if d := rep.DurationSeconds; d < 3.9 || d > 4 {
		t.Errorf("run took %.3f s on the fake clock, want the schedule's last send before 4 s", d)
	}
	if len(rep.Config.Stages) != 3 || rep.Config.Model != "open" {
		t.Errorf("report stages %v model %s, want the three stages, open", rep.Config.Stages, rep.Config.Model)
	}
}
