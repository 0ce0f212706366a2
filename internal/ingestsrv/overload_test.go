package ingestsrv

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/store"
)

// TestQueueFull503 makes the store's queue full deterministically: the store's
// writer is held (Store.HoldWriter), so the one allowed request waits in its
// group while a second one is refused at once with 503 and Retry-After.
// Releasing the writer lets the first be written: 200.
func TestQueueFull503(t *testing.T) {
	ts := startServer(t, Config{Config: store.Config{QueueRequests: 1}})
	release := ts.Store().HoldWriter()
	defer release()
	first := make(chan response, 1)
	firstBody := encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingProto) // on the test goroutine: encode may t.Fatal
	go func() {
		r, err := send(nil, http.MethodPost, ts.url+"/v1/logs", ctProto, "", bytesReader(firstBody))
		if err != nil {
			r.status = -1
		}
		first <- r
	}()
	polltest.Until(t, "first request queued", func() bool { return ts.Store().Stats().QueueRequests == 1 })

	resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(1, 1), otlpcodec.EncodingProto))
	wantStatus(t, resp, http.StatusServiceUnavailable)
	if ra, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After = %q, want a positive number of seconds", resp.header.Get("Retry-After"))
	}
	if code, _, err := otlpcodec.ParseStatus(otlpcodec.EncodingProto, resp.body); err != nil || code != otlpcodec.CodeUnavailable {
		t.Errorf("status body code %d (%v), want UNAVAILABLE", code, err)
	}
	release()
	wantStatus(t, <-first, http.StatusOK)
	st := getStats(t, ts.url)
	if st.Rejections["queue_full"] != 1 || st.Signals["logs"].Records != 1 {
		t.Errorf("stats: queue_full=%d logs records=%d, want 1 and 1", st.Rejections["queue_full"], st.Signals["logs"].Records)
	}
}

// TestInflightBudget503 fills the in-flight memory budget with requests whose
// bodies never finish arriving (all but their last byte sent: the budget is
// charged as bytes arrive); the next request is refused at once with 503
// instead of buffering.
func TestInflightBudget503(t *testing.T) {
	const maxBody = 64 << 10
	ts := startServer(t, Config{MaxBody: maxBody, InflightBytes: maxBody * (1 + otlpcodec.DecodeFactor)})
	const stalled, length = 4, maxBody - 100
	var writers []*io.PipeWriter
	done := make(chan struct{}, stalled)
	defer func() {
		for _, pw := range writers {
			pw.CloseWithError(errStop)
		}
	}()
	for range stalled { // each charges length+1 bytes once most of its body has arrived
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, _ := http.NewRequest(http.MethodPost, ts.url+"/v1/logs", pr)
		req.ContentLength = length
		req.Header.Set("Content-Type", ctProto)
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
		if _, err := pw.Write(make([]byte, length-1)); err != nil {
			t.Fatal(err)
		}
	}
	polltest.Until(t, "budget charged by the stalled bodies", func() bool { return ts.budget.used.Load() == stalled*(length+1) })

	body := encode(t, otlptest.Logs(0, 100), otlpcodec.EncodingProto) // fits MaxBody, not the budget left
	if len(body) > maxBody || int64(len(body)) < ts.budget.max-stalled*(length+1) {
		t.Fatalf("fixture is %d bytes", len(body))
	}
	resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", body)
	wantStatus(t, resp, http.StatusServiceUnavailable)
	if resp.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	for _, pw := range writers {
		pw.CloseWithError(errStop)
	}
	for range writers {
		<-done
	}
	polltest.Until(t, "budget released", func() bool { return ts.budget.used.Load() == 0 })
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body), http.StatusOK)
}

// TestMaxLagRecords503: with projection off, every stored record stays in
// the backlog; once it exceeds MaxLagRecords, ingest answers 503.
func TestMaxLagRecords503(t *testing.T) {
	ts := startServer(t, Config{Config: store.Config{NoProjection: true}, MaxLagRecords: 5})
	for i := range 3 { // 6 records: lag 2, 4, 6
		wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(uint64(2*i), 2), otlpcodec.EncodingProto)), http.StatusOK)
	}
	if lag := ts.Store().Stats().LagRecords; lag != 6 {
		t.Fatalf("lag %d records, want 6", lag)
	}
	resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(6, 1), otlpcodec.EncodingProto))
	wantStatus(t, resp, http.StatusServiceUnavailable)
	if resp.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}
