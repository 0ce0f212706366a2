package loadgen

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in           string
		index, count int
		wantErr      bool
	}{
		{"0/4", 0, 4, false},
		{"3/4", 3, 4, false},
		{" 1 / 2 ", 1, 2, false},
		{"4/4", 0, 0, true},
		{"-1/4", 0, 0, true},
		{"0/0", 0, 0, true},
		{"1", 0, 0, true},
		{"a/b", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			i, n, err := ParseShard(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseShard(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err == nil && (i != tt.index || n != tt.count) {
				t.Errorf("ParseShard(%q) = %d/%d, want %d/%d", tt.in, i, n, tt.index, tt.count)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("got %v, want it to wrap ErrInvalidConfig", err)
			}
		})
	}
}

// TestShardApplySplits: the shards' parts add up to the whole, and each
// shard has its own seed.
func TestShardApplySplits(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		count    int
		want     func(Config) float64 // the quantity split
		wantSum  float64
		wantEach []float64
	}{
		{"open model rate", Config{Rate: 1000}, 4, func(c Config) float64 { return c.Rate }, 1000, []float64{250, 250, 250, 250}},
		{"open model in-flight bound", Config{Rate: 1000, Concurrency: 10}, 4, func(c Config) float64 { return float64(c.Concurrency) }, 10, []float64{3, 3, 2, 2}},
		{"closed model workers", Config{Concurrency: 10}, 3, func(c Config) float64 { return float64(c.Concurrency) }, 10, []float64{4, 3, 3}},
		{"default workers", Config{}, 2, func(c Config) float64 { return float64(c.Concurrency) }, DefaultConcurrency, []float64{4, 4}},
		{"request budget", Config{Concurrency: 8, Requests: 10}, 4, func(c Config) float64 { return float64(c.Requests) }, 10, []float64{3, 3, 2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Payload.Seed = 1
			seeds := map[uint64]bool{}
			sum := 0.0
			for i := range tt.count {
				part, err := ShardPlan{Index: i, Count: tt.count}.Apply(tt.cfg)
				if err != nil {
					t.Fatal(err)
				}
				if got := tt.want(part); got != tt.wantEach[i] {
					t.Errorf("shard %d: got %v, want %v", i, got, tt.wantEach[i])
				}
				sum += tt.want(part)
				seeds[part.Payload.Seed] = true
				if tt.cfg.Rate > 0 && tt.cfg.Concurrency == 0 && part.Concurrency != 0 {
					t.Errorf("shard %d: open model in-flight bound %d, want 0 (each shard's default)", i, part.Concurrency)
				}
			}
			if sum != tt.wantSum {
				t.Errorf("parts add up to %v, want %v", sum, tt.wantSum)
			}
			if len(seeds) != tt.count {
				t.Errorf("got %d distinct seeds over %d shards, want one each", len(seeds), tt.count)
			}
		})
	}
	for _, bad := range []struct {
		name string
		cfg  Config
	}{
		{"fewer workers than shards", Config{Concurrency: 2}},
		{"fewer requests than shards", Config{Concurrency: 8, Requests: 3}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, err := (ShardPlan{Index: 0, Count: 4}).Apply(bad.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("got %v, want an ErrInvalidConfig", err)
			}
		})
	}
}

// TestRunShardHonoursStartAt runs a shard against a real server on a fake
// clock: nothing reaches the server before the start time, the first send is
// at it, and the report records the shard.
func TestRunShardHonoursStartAt(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: start}
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		arrivals = append(arrivals, clk.Now())
		mu.Unlock()
	}))
	defer srv.Close()

	startAt := start.Add(30 * time.Second)
	cfg := Config{Endpoint: srv.URL, Concurrency: 4, Requests: 40, Sender: SenderH1, Clock: clk,
		Payload: otlpgen.Config{Records: 2, PoolSize: 4, Seed: 1}}
	rep, err := RunShard(context.Background(), cfg, ShardPlan{Index: 1, Count: 2, StartAt: startAt})
	if err != nil {
		t.Fatal(err)
	}
	if len(arrivals) != 20 {
		t.Fatalf("server got %d requests, want 20 (half of 40)", len(arrivals))
	}
	for _, at := range arrivals {
		if at.Before(startAt) {
			t.Fatalf("a request arrived at %v, before the start at %v", at, startAt)
		}
	}
	s := rep.Shard
	switch {
	case s == nil:
		t.Fatal("report has no shard")
	case s.Index != 1 || s.Count != 2:
		t.Errorf("got shard %d/%d, want 1/2", s.Index, s.Count)
	case s.StartAt == nil || !s.StartAt.Equal(startAt):
		t.Errorf("got start_at %v, want %v", s.StartAt, startAt)
	case !s.FirstSend.Equal(startAt):
		t.Errorf("got first send %v, want %v (the fake clock does not move while sending)", s.FirstSend, startAt)
	case s.ClockOffset != nil:
		t.Errorf("got a clock offset %+v without probing", s.ClockOffset)
	}
	if rep.Totals.Status.S2xx != 20 || rep.Config.Requests != 20 || rep.Config.Concurrency != 2 {
		t.Errorf("got %d 2xx of a budget of %d with %d workers, want 20, 20, 2",
			rep.Totals.Status.S2xx, rep.Config.Requests, rep.Config.Concurrency)
	}

	t.Run("canceled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &fakeClock{now: start}
		cfg.Clock = c
		if _, err := RunShard(ctx, cfg, ShardPlan{Index: 0, Count: 2, StartAt: startAt}); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

// TestEstimateClockOffset: a target whose clock is off by a known amount,
// answering with a Date header to the second, on a fake clock where each
// request takes 2 ms.
func TestEstimateClockOffset(t *testing.T) {
	tests := []struct {
		name   string
		offset time.Duration
	}{
		{"target ahead", 3250 * time.Millisecond},
		{"target behind", -700 * time.Millisecond},
		{"in step", 0},
		{"ahead by a whole second", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Date(2026, 5, 1, 10, 0, 0, 123_456_789, time.UTC)}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clk.advance(time.Millisecond) // on the way in
				w.Header().Set("Date", clk.Now().Add(tt.offset).UTC().Format(http.TimeFormat))
				clk.advance(time.Millisecond) // on the way back
				w.WriteHeader(http.StatusNotFound)
			}))
			defer srv.Close()
			got, err := EstimateClockOffset(context.Background(), srv.Client(), srv.URL+"/", clk, DefaultClockProbes, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := math.Abs(got.Seconds - tt.offset.Seconds()); diff > got.UncertaintySeconds {
				t.Errorf("got offset %.4fs ± %.4fs, want %.4fs", got.Seconds, got.UncertaintySeconds, tt.offset.Seconds())
			}
			if got.UncertaintySeconds > 0.005 {
				t.Errorf("got uncertainty ±%.4fs after %d probes, want ≤ 5 ms (2 ms round trips)", got.UncertaintySeconds, got.Samples)
			}
		})
	}
	t.Run("no Date header", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Date"] = nil // net/http adds none then
		}))
		defer srv.Close()
		_, err := EstimateClockOffset(context.Background(), srv.Client(), srv.URL+"/", &fakeClock{now: time.Now()}, 3, time.Time{})
		if !errors.Is(err, ErrNoDate) {
			t.Errorf("got %v, want ErrNoDate", err)
		}
	})
}

// TestRunShardProbesTheTarget: a real run against a real server on this
// host's clock finds the offset of the server's (the same) clock near zero.
func TestRunShardProbesTheTarget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	cfg := Config{Endpoint: srv.URL, Concurrency: 2, Requests: 10, Payload: otlpgen.Config{Records: 2, PoolSize: 4, Seed: 1}}
	rep, err := RunShard(context.Background(), cfg, ShardPlan{Index: 0, Count: 1, ProbeClock: true, Host: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Shard.ClockOffset
	if o == nil {
		t.Fatalf("no clock offset; note %q", rep.Shard.ClockNote)
	}
	if math.Abs(o.Seconds) > o.UncertaintySeconds || o.Samples != 1 || o.Source != ClockOffsetSource {
		t.Errorf("got offset %+v, want 0 within its uncertainty from 1 http-date sample", *o)
	}
	if rep.Shard.FirstSend.Before(rep.Started) || rep.Shard.FirstSend.Sub(rep.Started) > time.Second || rep.Shard.Host != "h0" {
		t.Errorf("got first send %v for a run started %v on %q", rep.Shard.FirstSend, rep.Started, rep.Shard.Host)
	}
}

func TestResolveShard(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := now.Add(time.Minute)
	tests := []struct {
		name      string
		flags     ShardFlags
		env       map[string]string
		want      ShardPlan // Host and ProbeClock aside
		wantOK    bool
		wantError string
	}{
		{name: "plain run", wantOK: false, want: ShardPlan{Count: 1}},
		{name: "--shard", flags: ShardFlags{Shard: "2/4"}, wantOK: true, want: ShardPlan{Index: 2, Count: 4}},
		{name: "Indexed Job", flags: ShardFlags{Shards: 4}, env: map[string]string{EnvShardIndex: "3"}, wantOK: true, want: ShardPlan{Index: 3, Count: 4}},
		{name: "Indexed Job, count from env", env: map[string]string{EnvShardIndex: "1", EnvShards: "2", EnvStartAt: "2026-05-01T10:01:00Z"},
			wantOK: true, want: ShardPlan{Index: 1, Count: 2, StartAt: at}},
		{name: "a completion index alone is no shard", env: map[string]string{EnvShardIndex: "1"}, want: ShardPlan{Count: 1}},
		{name: "--start-in", flags: ShardFlags{StartIn: time.Minute}, wantOK: true, want: ShardPlan{Count: 1, StartAt: at}},
		{name: "--start-at beats env", flags: ShardFlags{Shard: "0/2", StartAt: "2026-05-01T10:01:00Z"}, env: map[string]string{EnvStartAt: "2027-01-01T00:00:00Z"},
			wantOK: true, want: ShardPlan{Count: 2, StartAt: at}},
		{name: "no index", flags: ShardFlags{Shards: 4}, wantError: "JOB_COMPLETION_INDEX"},
		{name: "index out of range", flags: ShardFlags{Shards: 4}, env: map[string]string{EnvShardIndex: "4"}, wantError: "0..3"},
		{name: "flags disagree", flags: ShardFlags{Shard: "0/2", Shards: 3}, wantError: "disagree"},
		{name: "both starts", flags: ShardFlags{StartAt: "2026-05-01T10:01:00Z", StartIn: time.Second}, wantError: "not both"},
		{name: "bad start", flags: ShardFlags{StartAt: "10:01"}, wantError: "RFC 3339"},
		{name: "bad shard count env", env: map[string]string{EnvShardIndex: "0", EnvShards: "many"}, wantError: EnvShards},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ResolveShard(tt.flags, func(k string) string { return tt.env[k] }, now)
			if tt.wantError != "" {
				if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("got error %v, want an ErrInvalidConfig saying %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Host, got.ProbeClock = "", false
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("got %+v (sharded %v), want %+v (sharded %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
