package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/goldentest"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// fakeReport builds a report whose latencies are the given microseconds.
func fakeReport(t *testing.T, started time.Time, seconds float64, lat []int64) *Report {
	t.Helper()
	h, hu := newHistogram(), newHistogram()
	for _, us := range lat {
		recordLatency(h, time.Duration(us)*time.Microsecond)
		recordLatency(hu, time.Duration(us/2)*time.Microsecond)
	}
	s := SignalStats{Requests: int64(len(lat)), Status: StatusCounts{S2xx: int64(len(lat))}, RecordsSent: 10 * int64(len(lat)),
		RecordsAcked: 10 * int64(len(lat)), BytesSent: 100 * int64(len(lat))}
	if err := s.finish(seconds, h, hu); err != nil {
		t.Fatal(err)
	}
	r := &Report{Schema: Schema, Started: started, DurationSeconds: seconds, Config: ReportConfig{Model: "open", Rate: 100, Concurrency: 4},
		Signals: map[string]*SignalStats{"logs": &s}}
	r.Totals = s
	return r
}

func TestHistogramMergeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a, b []int64
	for range 5000 {
		a = append(a, 100+rng.Int64N(5000))
		b = append(b, 1000+rng.Int64N(200000))
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ra, rb := fakeReport(t, t0.Add(time.Second), 10, a), fakeReport(t, t0, 12, b)

	// Through JSON, as reports from other machines arrive.
	var roundTripped []*Report
	for _, r := range []*Report{ra, rb} {
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadReport(&buf)
		if err != nil {
			t.Fatal(err)
		}
		roundTripped = append(roundTripped, back)
	}
	got, err := Merge(roundTripped...)
	if err != nil {
		t.Fatal(err)
	}
	want := fakeReport(t, t0, 12, append(append([]int64{}, a...), b...))
	if diff := cmp.Diff(want.Totals.Latency, got.Totals.Latency); diff != "" {
		t.Errorf("merged latency differs from one histogram of all values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Totals.LatencyUncorrected, got.Totals.LatencyUncorrected); diff != "" {
		t.Errorf("merged uncorrected latency (-want +got):\n%s", diff)
	}
	if got.Totals.Requests != 10000 || got.Totals.Histogram.Count != 10000 {
		t.Errorf("merged requests %d, histogram count %d, want 10000", got.Totals.Requests, got.Totals.Histogram.Count)
	}
	if !got.Started.Equal(t0) || got.DurationSeconds != 12 || got.Merged != 2 || got.Config.Rate != 200 || got.Config.Concurrency != 8 {
		t.Errorf("merged started %v duration %v merged %d rate %v concurrency %d", got.Started, got.DurationSeconds, got.Merged, got.Config.Rate, got.Config.Concurrency)
	}
	if want := 10000.0 / 12; got.Totals.RequestsPerSecond != want {
		t.Errorf("merged req/s %v, want %v", got.Totals.RequestsPerSecond, want)
	}
	// Merging a merge counts the machines, not the files.
	again, err := Merge(got, ra)
	if err != nil {
		t.Fatal(err)
	}
	if again.Merged != 3 || again.Totals.Requests != 15000 {
		t.Errorf("re-merge: merged %d requests %d, want 3 and 15000", again.Merged, again.Totals.Requests)
	}
}

func TestMergeRejects(t *testing.T) {
	r := fakeReport(t, time.Now(), 1, []int64{5})
	bad := *r
	bad.Schema = "other/v9"
	if _, err := Merge(&bad); err == nil {
		t.Error("Merge accepted a foreign schema")
	}
	broken := fakeReport(t, time.Now(), 1, []int64{5})
	broken.Signals["logs"].Histogram = &Histogram{Unit: "us", Encoding: HistogramEncoding, HDR: "not base64!"}
	if _, err := Merge(broken); err == nil {
		t.Error("Merge accepted an undecodable histogram")
	}
	if _, err := Merge(); err == nil {
		t.Error("Merge of nothing succeeded")
	}
}

// normalize replaces the values that vary between runs (times, latencies,
// rates, encoded histograms) with their JSON type, keeping counts and keys.
func normalize(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e, k)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e, key)
		}
		return x
	case float64:
		switch key {
		case "p50", "p90", "p99", "p999", "max", "mean", "duration_seconds", "requests_per_second",
			"records_per_second", "bytes_sent", "late_sends", "count":
			return "<number>"
		}
		return x
	case string:
		switch key {
		case "started", "hdr", "endpoint":
			return "<string>"
		}
	}
	return v
}

func TestReportGoldenShape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/metrics") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{Requests: 9, Concurrency: 1}},
		{"open", Config{Requests: 9, Rate: 1000, Concurrency: 2, Mix: Mix{2, 1, 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Endpoint = srv.URL
			cfg.Header = http.Header{"Authorization": {"secret"}}
			cfg.Payload = otlpgen.Config{Records: 3, PoolSize: 1, Seed: 7}
			cfg.RunID = 0x0123456789abcdef
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "secret") {
				t.Error("report leaks a header value")
			}
			var v any
			if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			var norm bytes.Buffer
			enc := json.NewEncoder(&norm)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(normalize(v, "")); err != nil {
				t.Fatal(err)
			}
			goldentest.Check(t, "report_"+tt.name+".golden", norm.Bytes())
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"signal", "total", "p99.9", "records acked"} {
				if !strings.Contains(text.String(), s) {
					t.Errorf("text report lacks %q:\n%s", s, text.String())
				}
			}
		})
	}
}

func TestReadReportRejectsOtherSchema(t *testing.T) {
	if _, err := ReadReport(strings.NewReader(`{"schema":"x/v1"}`)); err == nil {
		t.Error("ReadReport accepted schema x/v1")
	}
}
