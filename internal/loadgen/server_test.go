package loadgen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// partialBody encodes an Export*ServiceResponse for the signal of path with
// rejected records, in the encoding named by contentType.
func partialBody(t *testing.T, path, contentType string, rejected int64) []byte {
	t.Helper()
	json := isJSON(contentType)
	pick := func(j, p func() ([]byte, error)) []byte {
		f := p
		if json {
			f = j
		}
		b, err := f()
		if err != nil {
			t.Error(err)
		}
		return b
	}
	switch path {
	case "/v1/logs":
		r := plogotlp.NewExportResponse()
		r.PartialSuccess().SetRejectedLogRecords(rejected)
		r.PartialSuccess().SetErrorMessage("some rejected")
		return pick(r.MarshalJSON, r.MarshalProto)
	case "/v1/metrics":
		r := pmetricotlp.NewExportResponse()
		r.PartialSuccess().SetRejectedDataPoints(rejected)
		return pick(r.MarshalJSON, r.MarshalProto)
	case "/v1/traces":
		r := ptraceotlp.NewExportResponse()
		r.PartialSuccess().SetRejectedSpans(rejected)
		return pick(r.MarshalJSON, r.MarshalProto)
	}
	t.Errorf("unexpected path %q", path)
	return nil
}

// outcomes is the deterministic answer plan of the accounting server: the
// k-th request on each path gets outcomes[k % len].
var outcomes = []struct {
	status   int
	rejected int64 // partial_success, for 200
	garbage  bool  // 200 with an undecodable body
}{
	{200, 0, false}, {200, 0, false}, {200, 3, false}, {503, 0, false}, {200, 0, false},
	{400, 0, false}, {200, 0, true}, {413, 0, false}, {415, 0, false}, {429, 0, false},
	{500, 0, false}, {200, 1, false},
}

// newAccountingServer answers each path's requests by the outcomes plan.
func newAccountingServer(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]int{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Errorf("read body: %v", err)
		}
		mu.Lock()
		o := outcomes[seen[r.URL.Path]%len(outcomes)]
		seen[r.URL.Path]++
		mu.Unlock()
		ct := r.Header.Get("Content-Type")
		w.Header().Set("Content-Type", ct)
		switch {
		case o.status != 200:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(o.status)
		case o.garbage:
			_, _ = w.Write([]byte("\xff\xff\xff not a response"))
		case o.rejected > 0:
			_, _ = w.Write(partialBody(t, r.URL.Path, ct, o.rejected))
		}
	}))
}

func TestAccountingExact(t *testing.T) {
	const cycles, records = 5, 7
	perSignal := int64(cycles * len(outcomes))
	for _, tc := range []struct {
		enc    otlpgen.Encoding
		sender Sender
	}{
		{otlpgen.EncodingProto, SenderAuto}, {otlpgen.EncodingJSON, SenderAuto},
		{otlpgen.EncodingProto, SenderH1}, {otlpgen.EncodingJSON, SenderH1},
		{otlpgen.EncodingProto, SenderNetHTTP}, {otlpgen.EncodingJSON, SenderNetHTTP},
	} {
		enc := tc.enc
		t.Run(string(enc)+"/"+string(tc.sender), func(t *testing.T) {
			srv := newAccountingServer(t)
			defer srv.Close()
			rep, err := Run(context.Background(), Config{
				Endpoint: srv.URL, Requests: 3 * perSignal, Concurrency: 4, Sender: tc.sender,
				Payload: otlpgen.Config{Records: records, PoolSize: 2, Encoding: enc},
			})
			if err != nil {
				t.Fatal(err)
			}
			var want SignalStats
			want.Requests = perSignal
			for _, o := range outcomes {
				want.Status.add(o.status)
				if o.status == 200 {
					want.RecordsAcked += cycles * (records - o.rejected)
					want.RecordsRejected += cycles * o.rejected
				}
				if o.garbage {
					want.ResponseDecodeErrors += cycles
				}
			}
			want.Status = scale(want.Status, cycles)
			want.RecordsSent = perSignal * records
			for _, name := range signalNames() {
				got := rep.Signals[name]
				check := func(what string, got, want int64) {
					if got != want {
						t.Errorf("%s %s = %d, want %d", name, what, got, want)
					}
				}
				check("requests", got.Requests, want.Requests)
				check("2xx", got.Status.S2xx, want.Status.S2xx)
				check("400", got.Status.S400, want.Status.S400)
				check("413", got.Status.S413, want.Status.S413)
				check("415", got.Status.S415, want.Status.S415)
				check("429", got.Status.S429, want.Status.S429)
				check("503", got.Status.S503, want.Status.S503)
				check("other", got.Status.Other, want.Status.Other)
				check("transport errors", got.TransportErrors, 0)
				check("records sent", got.RecordsSent, want.RecordsSent)
				check("records acked", got.RecordsAcked, want.RecordsAcked)
				check("records rejected", got.RecordsRejected, want.RecordsRejected)
				check("response decode errors", got.ResponseDecodeErrors, want.ResponseDecodeErrors)
				check("latency samples", got.Histogram.Count, want.Requests)
				if got.BytesSent <= 0 {
					t.Errorf("%s bytes sent %d, want > 0", name, got.BytesSent)
				}
			}
			if got, want := rep.Totals.RecordsAcked, 3*want.RecordsAcked; got != want {
				t.Errorf("total records acked %d, want %d", got, want)
			}
			if rep.Interrupted {
				t.Error("report interrupted, want a complete run")
			}
		})
	}
}

func scale(s StatusCounts, k int64) StatusCounts {
	return StatusCounts{s.S2xx * k, s.S400 * k, s.S413 * k, s.S415 * k, s.S429 * k, s.S503 * k, s.Other * k}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1)%2 == 1 { // every first attempt is refused
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	rep, err := Run(context.Background(), Config{
		Endpoint: srv.URL, Requests: 10, Concurrency: 1, Retry: 3,
		Mix: Mix{1, 0, 0}, Payload: otlpgen.Config{Records: 2, PoolSize: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	logs := rep.Signals["logs"]
	if logs.Requests != 20 || logs.Retries != 10 || logs.Status.S503 != 10 || logs.Status.S2xx != 10 || logs.RecordsAcked != 20 {
		t.Errorf("got requests %d retries %d 503 %d 2xx %d acked %d, want 20 10 10 10 20",
			logs.Requests, logs.Retries, logs.Status.S503, logs.Status.S2xx, logs.RecordsAcked)
	}
	if logs.Histogram.Count != 10 {
		t.Errorf("latency samples %d, want one per request (10)", logs.Histogram.Count)
	}
}

func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		n      int
		want   time.Duration
	}{
		{"", 0, 100 * time.Millisecond},
		{"", 2, 400 * time.Millisecond},
		{"", 40, 5 * time.Second},
		{"2", 0, 2 * time.Second},
		{"120", 0, 5 * time.Second},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 0, 3 * time.Second},
		{"garbage", 1, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := retryDelay(tt.header, tt.n, now, 5*time.Second); got != tt.want {
			t.Errorf("retryDelay(%q, %d) = %v, want %v", tt.header, tt.n, got, tt.want)
		}
	}
}

func TestCoordinatedOmissionCorrection(t *testing.T) {
	const stall = 300 * time.Millisecond
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if n.Add(1) == 20 {
			time.Sleep(stall) // one stall; everything else answers at once
		}
	}))
	defer srv.Close()
	// One connection at 200 req/s: during the stall ~60 sends fall due and
	// wait; a closed-loop measurement would hide that.
	rep, err := Run(context.Background(), Config{
		Endpoint: srv.URL, Rate: 200, Concurrency: 1, Requests: 200,
		Mix: Mix{0, 0, 1}, Payload: otlpgen.Config{Records: 5, PoolSize: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	tot := rep.Totals
	stallMs := float64(stall / time.Millisecond)
	if tot.Latency.Max < stallMs {
		t.Errorf("corrected max %.1fms, want >= stall %.0fms", tot.Latency.Max, stallMs)
	}
	if tot.LatencyUncorrected == nil {
		t.Fatal("open model report lacks uncorrected latency")
	}
	if tot.LatencyUncorrected.Max < stallMs {
		t.Errorf("uncorrected max %.1fms, want >= stall %.0fms (the stalled request itself)", tot.LatencyUncorrected.Max, stallMs)
	}
	if tot.Latency.P99 <= tot.LatencyUncorrected.P99 {
		t.Errorf("corrected p99 %.3fms <= uncorrected p99 %.3fms, want the stall to show in corrected", tot.Latency.P99, tot.LatencyUncorrected.P99)
	}
	if tot.Latency.Mean <= tot.LatencyUncorrected.Mean {
		t.Errorf("corrected mean %.3fms <= uncorrected %.3fms", tot.Latency.Mean, tot.LatencyUncorrected.Mean)
	}
	if tot.LateSends == 0 {
		t.Error("no late sends counted, want the sends queued behind the stall")
	}
	if tot.Requests != 200 || tot.Status.S2xx != 200 {
		t.Errorf("requests %d, 2xx %d, want 200 each", tot.Requests, tot.Status.S2xx)
	}
}

func TestCancelStillReports(t *testing.T) {
	for _, sender := range []Sender{SenderAuto, SenderH1, SenderNetHTTP} {
		t.Run(string(sender), func(t *testing.T) { testCancelStillReports(t, sender) })
	}
}

func testCancelStillReports(t *testing.T, sender Sender) {
	release := make(chan struct{})
	var arrived atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if arrived.Add(1) > 10 {
			cancel() // Ctrl-C while requests hang
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	rep, err := Run(ctx, Config{
		Endpoint: srv.URL, Duration: time.Minute, Concurrency: 2, Sender: sender,
		Payload: otlpgen.Config{Records: 1, PoolSize: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted {
		t.Error("report not marked interrupted")
	}
	// Ten requests were answered before the cancel; with two workers the
	// tenth may still have been in flight when it came.
	if tot := rep.Totals; tot.Status.S2xx < 9 || tot.Canceled == 0 || tot.Requests != tot.Status.S2xx+tot.Canceled {
		t.Errorf("requests %d, 2xx %d, canceled %d: want >= 9 answered, > 0 canceled, nothing else", tot.Requests, tot.Status.S2xx, tot.Canceled)
	}
	if rep.Totals.TransportErrors != 0 {
		t.Errorf("transport errors %d, want cancellations counted apart", rep.Totals.TransportErrors)
	}
	if rep.DurationSeconds >= 60 {
		t.Errorf("ran %.1fs, want a prompt stop", rep.DurationSeconds)
	}
}

func TestTransportErrorsAndErrorRate(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	rep, err := Run(context.Background(), Config{
		Endpoint: url, Requests: 6, Concurrency: 2, Timeout: 5 * time.Second,
		Payload: otlpgen.Config{Records: 1, PoolSize: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.TransportErrors != 6 || rep.Totals.Histogram.Count != 0 {
		t.Errorf("transport errors %d, latency samples %d, want 6 and 0", rep.Totals.TransportErrors, rep.Totals.Histogram.Count)
	}
	if err := rep.CheckErrorRate(1); !errors.Is(err, ErrTooManyErrors) || !strings.Contains(err.Error(), "without a response") {
		t.Errorf("CheckErrorRate(1) = %v, want no-response error", err)
	}
}

func TestCheckErrorRate(t *testing.T) {
	tests := []struct {
		name  string
		stats SignalStats
		max   float64
		fail  bool
	}{
		{"all ok", SignalStats{Requests: 10, Status: StatusCounts{S2xx: 10}}, 0, false},
		{"10% under 20%", SignalStats{Requests: 10, Status: StatusCounts{S2xx: 9, S503: 1}}, 0.2, false},
		{"10% over 5%", SignalStats{Requests: 10, Status: StatusCounts{S2xx: 9, S400: 1}}, 0.05, true},
		{"canceled not errors", SignalStats{Requests: 10, Canceled: 5, Status: StatusCounts{S2xx: 5}}, 0, false},
		{"nothing sent", SignalStats{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Totals: tt.stats}
			if err := r.CheckErrorRate(tt.max); (err != nil) != tt.fail {
				t.Errorf("CheckErrorRate(%v) = %v, want fail=%v", tt.max, err, tt.fail)
			}
		})
	}
}

func TestLargeBodiesAllSenders(t *testing.T) {
	// Bodies of a few MB do not fit the socket buffer: the epoll sender
	// must finish them on EPOLLOUT, the others block in write.
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil || n != r.ContentLength {
			t.Errorf("read %d of %d bytes: %v", n, r.ContentLength, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got.Add(n)
	}))
	defer srv.Close()
	for _, sender := range []Sender{SenderEpoll, SenderH1, SenderNetHTTP} {
		t.Run(string(sender), func(t *testing.T) {
			got.Store(0)
			rep, err := Run(context.Background(), Config{
				Endpoint: srv.URL, Requests: 6, Concurrency: 3, Sender: sender, Mix: Mix{1, 0, 0},
				Payload: otlpgen.Config{Records: 4000, BodyBytes: 1024, PoolSize: 2},
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Totals.Status.S2xx != 6 || rep.Totals.BytesSent != got.Load() || rep.Totals.BytesSent < 6<<20 {
				t.Errorf("2xx %d, bytes sent %d, server read %d: want 6 answered and every byte (> 6 MiB) read",
					rep.Totals.Status.S2xx, rep.Totals.BytesSent, got.Load())
			}
		})
	}
}

func TestTimeoutIsTransportError(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select { // hang until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	for _, sender := range []Sender{SenderEpoll, SenderH1, SenderNetHTTP} {
		t.Run(string(sender), func(t *testing.T) {
			rep, err := Run(context.Background(), Config{
				Endpoint: srv.URL, Requests: 2, Concurrency: 2, Sender: sender, Timeout: 100 * time.Millisecond,
				Payload: otlpgen.Config{Records: 1, PoolSize: 1},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tot := rep.Totals; tot.TransportErrors != 2 || tot.Requests != 2 || tot.Canceled != 0 {
				t.Errorf("requests %d, transport errors %d, canceled %d: want 2 timeouts", tot.Requests, tot.TransportErrors, tot.Canceled)
			}
		})
	}
}

func TestEarlyAnswerToLargeBody(t *testing.T) {
	// The server refuses the body without reading it (413) and closes the
	// connection: the write fails, the 413 must still be counted.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	}))
	defer srv.Close()
	for _, sender := range []Sender{SenderEpoll, SenderH1, SenderNetHTTP} {
		t.Run(string(sender), func(t *testing.T) {
			rep, err := Run(context.Background(), Config{
				Endpoint: srv.URL, Requests: 4, Concurrency: 2, Sender: sender, Mix: Mix{1, 0, 0},
				Payload: otlpgen.Config{Records: 8000, BodyBytes: 1024, PoolSize: 1},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tot := rep.Totals; tot.Status.S413 != 4 || tot.TransportErrors != 0 {
				t.Errorf("413 %d, transport errors %d: want 4 answered 413", tot.Status.S413, tot.TransportErrors)
			}
		})
	}
}

// TestLiveTimes: by default every sender moves each request's log times to the clock at its
// send, so a server sees times of the run's own seconds although the pool was encoded with
// times of 2020; with Times replay it sees the pool's.
func TestLiveTimes(t *testing.T) {
	poolTime := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var lo, hi int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := plogotlp.NewExportRequest()
		if err == nil {
			err = req.UnmarshalProto(body)
		}
		if err != nil {
			t.Errorf("decode: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		recs := req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := range recs.Len() {
			for _, ts := range []int64{int64(recs.At(i).Timestamp()), int64(recs.At(i).ObservedTimestamp())} {
				if lo == 0 || ts < lo {
					lo = ts
				}
				hi = max(hi, ts)
			}
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		sender Sender
		times  Times
	}{{SenderEpoll, TimesAuto}, {SenderH1, TimesLive}, {SenderNetHTTP, TimesAuto}, {SenderEpoll, TimesReplay}} {
		t.Run(string(tc.sender)+"/"+string(tc.times), func(t *testing.T) {
			mu.Lock()
			lo, hi = 0, 0
			mu.Unlock()
			start := time.Now()
			rep, err := Run(context.Background(), Config{
				Endpoint: srv.URL, Requests: 40, Concurrency: 4, Sender: tc.sender, Times: tc.times, Mix: Mix{1, 0, 0},
				Payload: otlpgen.Config{Records: 5, PoolSize: 8, BaseTime: poolTime},
			})
			if err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			if rep.Totals.Status.S2xx != 40 {
				t.Fatalf("2xx %d of 40", rep.Totals.Status.S2xx)
			}
			mu.Lock()
			defer mu.Unlock()
			// A pool's records sit within a few milliseconds after its BaseTime.
			from, to := start, end.Add(time.Second)
			want := "live"
			if tc.times == TimesReplay {
				from, to, want = poolTime, poolTime.Add(time.Second), "replay"
			}
			if lo < from.UnixNano() || hi > to.UnixNano() || rep.Config.Times != want {
				t.Errorf("log times %v .. %v, report says %q; want within %v .. %v, %q",
					time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC(), rep.Config.Times, from.UTC(), to.UTC(), want)
			}
		})
	}
}
