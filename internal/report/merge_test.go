package report

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/loadgen"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sample is what one synthetic shard measured: latencies in µs per signal.
type sample struct {
	started time.Time
	seconds float64
	shard   *loadgen.Shard
	lat     map[string][]int64
}

// build returns the report a load run with these latencies writes (through
// JSON, as reports arrive from other machines): histograms of every value,
// counts derived from them, percentiles computed by loadgen.
func build(t testing.TB, s sample, edit func(*loadgen.Report)) *loadgen.Report {
	t.Helper()
	g := loadgen.HistogramGeometry()
	r := &loadgen.Report{
		Schema: loadgen.Schema, Started: s.started, DurationSeconds: s.seconds, Shard: s.shard,
		Config: loadgen.ReportConfig{Endpoint: "http://127.0.0.1:4318", Model: "open", Rate: 500, Concurrency: 64,
			Records: 50, Encoding: "proto", Compression: "none", Seed: 7, DurationSeconds: 10,
			Mix: map[string]int{"logs": 1, "metrics": 0, "traces": 1}},
		Signals: map[string]*loadgen.SignalStats{},
	}
	for name, lat := range s.lat {
		h := hdrhistogram.New(g.Lowest, g.Highest, int(g.SignificantDigits))
		for _, us := range lat {
			if err := h.RecordValue(us); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		hist := g
		hist.Count, hist.HDR = h.TotalCount(), string(enc)
		n := int64(len(lat))
		r.Signals[name] = &loadgen.SignalStats{
			Requests: n + 3, Status: loadgen.StatusCounts{S2xx: n - 2, S503: 2}, TransportErrors: 2, Canceled: 1,
			RecordsSent: 50 * (n + 3), RecordsAcked: 50*(n-2) - 1, RecordsRejected: 1, BytesSent: 900 * (n + 3),
			LateSends: n / 10, Histogram: &hist,
		}
	}
	if edit != nil {
		edit(r)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := loadgen.ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func latencies(rng *rand.Rand, n int, lo, spread int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = lo + rng.Int64N(spread)
	}
	return out
}

func shard(i, n int, first time.Time) *loadgen.Shard {
	return &loadgen.Shard{Index: i, Count: n, FirstSend: first}
}

// threeShards returns samples of three shards with different latency
// distributions, so that averaging their percentiles would be visibly wrong.
func threeShards() []sample {
	rng := rand.New(rand.NewPCG(3, 4))
	var out []sample
	for i, lo := range []int64{200, 5_000, 80_000} {
		start := t0.Add(time.Duration(i) * 40 * time.Millisecond)
		out = append(out, sample{started: start, seconds: 10 + float64(i)/10, shard: shard(i, 3, start),
			lat: map[string][]int64{"logs": latencies(rng, 3000+i*500, lo, lo*20), "traces": latencies(rng, 1000, lo*2, 400_000)}})
	}
	return out
}

func inputs(t testing.TB, samples []sample) []Input {
	var in []Input
	for i, s := range samples {
		in = append(in, Input{Name: filepath.Join("shards", string(rune('a'+i))+".json"), Report: build(t, s, nil)})
	}
	return in
}

func TestMergeCountsAreSums(t *testing.T) {
	in := inputs(t, threeShards())
	got, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"logs", "traces"} {
		var want loadgen.SignalStats
		for _, x := range in {
			s := x.Report.Signals[sig]
			want.Requests += s.Requests
			want.Status.S2xx += s.Status.S2xx
			want.Status.S503 += s.Status.S503
			want.TransportErrors += s.TransportErrors
			want.Canceled += s.Canceled
			want.RecordsSent += s.RecordsSent
			want.RecordsAcked += s.RecordsAcked
			want.RecordsRejected += s.RecordsRejected
			want.BytesSent += s.BytesSent
			want.LateSends += s.LateSends
		}
		g := got.Signals[sig]
		gotCounts := loadgen.SignalStats{Requests: g.Requests, Status: g.Status, TransportErrors: g.TransportErrors,
			Canceled: g.Canceled, RecordsSent: g.RecordsSent, RecordsAcked: g.RecordsAcked,
			RecordsRejected: g.RecordsRejected, BytesSent: g.BytesSent, LateSends: g.LateSends}
		if diff := cmp.Diff(want, gotCounts); diff != "" {
			t.Errorf("%s: merged counts are not the sums (-want +got):\n%s", sig, diff)
		}
	}
	if got.Merged != 3 || len(got.Shards) != 3 {
		t.Errorf("got merged %d with %d shards, want 3 and 3", got.Merged, len(got.Shards))
	}
	if got.Config.Rate != 1500 || got.Config.Concurrency != 192 {
		t.Errorf("got rate %v concurrency %d, want the sums 1500 and 192", got.Config.Rate, got.Config.Concurrency)
	}
}

// TestMergePercentilesExact: the merged percentiles are those of one
// histogram fed every sample of every shard, to the microsecond.
func TestMergePercentilesExact(t *testing.T) {
	samples := threeShards()
	got, err := Merge(inputs(t, samples))
	if err != nil {
		t.Fatal(err)
	}
	g := loadgen.HistogramGeometry()
	all := hdrhistogram.New(g.Lowest, g.Highest, int(g.SignificantDigits))
	perSignal := map[string][]int64{}
	for _, s := range samples {
		for sig, lat := range s.lat {
			perSignal[sig] = append(perSignal[sig], lat...)
			for _, us := range lat {
				_ = all.RecordValue(us)
			}
		}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	want := loadgen.Percentiles{
		P50: ms(all.ValueAtPercentile(50)), P90: ms(all.ValueAtPercentile(90)), P99: ms(all.ValueAtPercentile(99)),
		P999: ms(all.ValueAtPercentile(99.9)), Max: ms(all.Max()), Mean: all.Mean() / 1000,
	}
	if diff := cmp.Diff(want, got.Totals.Latency); diff != "" {
		t.Errorf("merged total percentiles differ from one histogram of every sample (-want +got):\n%s", diff)
	}
	merged, err := got.Totals.Histogram.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Equals(all) {
		t.Error("merged total histogram is not bucket for bucket the histogram of every sample")
	}
	// Per signal too, against a single run that saw all of that signal's samples.
	one, err := Merge([]Input{{Name: "one", Report: build(t, sample{started: t0, seconds: 10, lat: perSignal}, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	for sig := range perSignal {
		if diff := cmp.Diff(one.Signals[sig].Latency, got.Signals[sig].Latency); diff != "" {
			t.Errorf("%s percentiles (-one histogram +merged):\n%s", sig, diff)
		}
	}
}

func TestMergeCommonWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := sample{started: t0, seconds: 10, shard: shard(0, 2, t0), lat: map[string][]int64{"logs": latencies(rng, 1000, 100, 1000)}}
	b := sample{started: t0.Add(2 * time.Second), seconds: 10, shard: shard(1, 2, t0.Add(2*time.Second)), lat: map[string][]int64{"logs": latencies(rng, 3000, 100, 1000)}}
	got, err := Merge(inputs(t, []sample{a, b}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Started.Equal(t0) || got.DurationSeconds != 12 {
		t.Errorf("got window %v + %vs, want %v + 12s (earliest start to latest end)", got.Started, got.DurationSeconds, t0)
	}
	if want := float64(got.Totals.Requests) / 12; got.Totals.RequestsPerSecond != want {
		t.Errorf("got %v req/s, want %v (all requests over the common window)", got.Totals.RequestsPerSecond, want)
	}
}

func TestMergeRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := func(i int) sample {
		start := t0.Add(time.Duration(i) * time.Millisecond)
		return sample{started: start, seconds: 10, shard: shard(i, 2, start), lat: map[string][]int64{"logs": latencies(rng, 500, 100, 5000)}}
	}
	tests := []struct {
		name    string
		edit    func(*loadgen.Report)
		other   *sample
		wantErr error
		wantMsg string
	}{
		{name: "records differ", edit: func(r *loadgen.Report) { r.Config.Records = 100 }, wantErr: ErrMismatch, wantMsg: "records 100"},
		{name: "model differs", edit: func(r *loadgen.Report) { r.Config.Model = "closed" }, wantErr: ErrMismatch, wantMsg: `model "closed"`},
		{name: "endpoint differs", edit: func(r *loadgen.Report) { r.Config.Endpoint = "http://10.0.0.1:4318" }, wantErr: ErrMismatch, wantMsg: "endpoint"},
		{name: "mix differs", edit: func(r *loadgen.Report) { r.Config.Mix["metrics"] = 1 }, wantErr: ErrMismatch, wantMsg: "mix"},
		{name: "duration asked differs", edit: func(r *loadgen.Report) { r.Config.DurationSeconds = 60 }, wantErr: ErrMismatch, wantMsg: "duration_seconds"},
		{name: "histogram precision differs", edit: func(r *loadgen.Report) { r.Signals["logs"].Histogram.SignificantDigits = 2 }, wantErr: ErrMismatch, wantMsg: "at 2 digits"},
		{name: "histogram range differs", edit: func(r *loadgen.Report) { r.Signals["logs"].Histogram.Highest = 60_000_000 }, wantErr: ErrMismatch, wantMsg: "histogram"},
		{name: "histogram count tampered", edit: func(r *loadgen.Report) { r.Signals["logs"].Histogram.Count++ }, wantErr: ErrDropped, wantMsg: "its count says 501"},
		{name: "histogram missing", edit: func(r *loadgen.Report) { r.Signals["logs"].Histogram = nil }, wantErr: ErrDropped, wantMsg: "no latency histogram"},
		{name: "same shard twice", edit: func(r *loadgen.Report) { r.Shard.Index = 0 }, wantErr: ErrMismatch, wantMsg: "both hold shard 0/2"},
		{name: "shards of different loads", edit: func(r *loadgen.Report) { r.Shard.Count = 3 }, wantErr: ErrMismatch, wantMsg: "shard of 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []Input{{Name: "a.json", Report: build(t, base(0), nil)}, {Name: "b.json", Report: build(t, base(1), tt.edit)}}
			_, err := Merge(in)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("got error %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
	t.Run("what shards split may differ", func(t *testing.T) {
		in := []Input{{Name: "a.json", Report: build(t, base(0), func(r *loadgen.Report) { r.Config.Requests = 18 })},
			{Name: "b.json", Report: build(t, base(1), func(r *loadgen.Report) {
				r.Config.Rate, r.Config.Concurrency, r.Config.Seed, r.Config.Requests = 333, 3, 99, 17
			})}}
		got, err := Merge(in)
		if err != nil {
			t.Fatalf("got %v, want rate, concurrency, seed and request budget to differ between shards", err)
		}
		if got.Config.Requests != 35 || got.Config.Rate != 833 {
			t.Errorf("got request budget %d and rate %v, want the sums 35 and 833", got.Config.Requests, got.Config.Rate)
		}
	})
	t.Run("the same report twice", func(t *testing.T) {
		r := build(t, sample{started: t0, seconds: 1, lat: map[string][]int64{"logs": {100, 200}}}, nil)
		if _, err := Merge([]Input{{Name: "x.json", Report: r}, {Name: "y.json", Report: r}}); !errors.Is(err, ErrMismatch) {
			t.Errorf("got %v, want %v: one unsharded run merged twice", err, ErrMismatch)
		}
	})
}

func TestStartSpread(t *testing.T) {
	off := func(s, u float64) *loadgen.ClockOffset {
		return &loadgen.ClockOffset{Seconds: s, UncertaintySeconds: u, Source: "http-date", Samples: 8}
	}
	tests := []struct {
		name          string
		shards        []loadgen.Shard
		wantSpread    time.Duration
		wantCorrected time.Duration // 0: none expected
		wantWarnings  []string
	}{
		{name: "synchronised", shards: []loadgen.Shard{
			{Index: 0, Count: 2, FirstSend: t0}, {Index: 1, Count: 2, FirstSend: t0.Add(30 * time.Millisecond)},
		}, wantSpread: 30 * time.Millisecond},
		{name: "late shard", shards: []loadgen.Shard{
			{Index: 0, Count: 2, FirstSend: t0}, {Index: 1, Count: 2, FirstSend: t0.Add(3 * time.Second)},
		}, wantSpread: 3 * time.Second, wantWarnings: []string{"shards started 3s apart"}},
		{name: "skewed clock explains the gap", shards: []loadgen.Shard{
			{Index: 0, Count: 2, FirstSend: t0, ClockOffset: off(0, 0.01)},
			{Index: 1, Count: 2, FirstSend: t0.Add(2 * time.Second), ClockOffset: off(-2, 0.02)},
		}, wantSpread: 2 * time.Second, wantCorrected: time.Nanosecond},
		{name: "vague offsets do not overrule the hosts' clocks", shards: []loadgen.Shard{
			{Index: 0, Count: 2, FirstSend: t0, ClockOffset: off(-0.6, 0.5)},
			{Index: 1, Count: 2, FirstSend: t0.Add(10 * time.Millisecond), ClockOffset: off(0.6, 0.5)},
		}, wantSpread: 10 * time.Millisecond, wantCorrected: 1300 * time.Millisecond},
		{name: "missing shard", shards: []loadgen.Shard{
			{Index: 0, Count: 3, FirstSend: t0}, {Index: 2, Count: 3, FirstSend: t0},
		}, wantWarnings: []string{"shards [1] have no report"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := StartSpread(&loadgen.Report{Shards: tt.shards}, time.Second)
			if sp.Spread != tt.wantSpread {
				t.Errorf("got spread %v, want %v", sp.Spread, tt.wantSpread)
			}
			switch {
			case tt.wantCorrected == 0 && sp.Corrected != nil:
				t.Errorf("got corrected spread %v, want none", *sp.Corrected)
			case tt.wantCorrected != 0 && (sp.Corrected == nil || *sp.Corrected > tt.wantCorrected):
				t.Errorf("got corrected spread %v, want at most %v", sp.Corrected, tt.wantCorrected)
			}
			w := sp.Warnings()
			if len(w) != len(tt.wantWarnings) {
				t.Fatalf("got warnings %q, want %d", w, len(tt.wantWarnings))
			}
			for i := range w {
				if !strings.Contains(w[i], tt.wantWarnings[i]) {
					t.Errorf("got warning %q, want it to say %q", w[i], tt.wantWarnings[i])
				}
			}
		})
	}
}

func TestWriteTextGolden(t *testing.T) {
	s := threeShards()
	s[1].shard.ClockOffset = &loadgen.ClockOffset{Seconds: 0.012, UncertaintySeconds: 0.004, Source: "http-date", Samples: 8}
	s[2].shard.FirstSend = s[2].shard.FirstSend.Add(1500 * time.Millisecond)
	got, err := Merge(inputs(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, got, 0); err != nil {
		t.Fatal(err)
	}
	var single bytes.Buffer
	if err := got.WriteText(&single); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), single.String()) {
		t.Error("merged text does not begin with the table load prints")
	}
	goldentest.Check(t, "merged.txt.golden", buf.Bytes())
}
