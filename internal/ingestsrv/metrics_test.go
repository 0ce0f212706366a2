package ingestsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/store"
)

func TestPrometheusMetrics(t *testing.T) {
	ts := startServer(t, Config{})
	for i := range 3 {
		wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(uint64(i*2), 2), otlpcodec.EncodingProto)), 200)
	}
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", "text/plain", "", nil), 415)
	waitProjected(t, ts.Store())
	resp, err := send(nil, http.MethodGet, ts.url+"/metrics", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, resp, 200)
	text := string(resp.body)
	for _, want := range []string{
		`otelbench_ingest_requests_total{signal="logs"} 3`,
		`otelbench_ingest_records_total{signal="logs"} 6`,
		`otelbench_ingest_rejections_total{reason="unsupported_media"} 1`,
		`otelbench_queue_max_requests `,
		"otelbench_store_commits_total 3\n", // one request at a time: a commit each,
		"otelbench_store_syncs_total 3\n",   // and an fsync each (--sync full)
		`otelbench_projection_deferring 0`,  // 3 requests do not saturate anything
		`otelbench_projection_deferred_seconds_total 0`,
		`process_resident_memory_bytes `,
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	busy := regexp.MustCompile(`(?m)^otelbench_store_writer_busy_seconds_total (\S+)`).FindStringSubmatch(text)
	if busy == nil || busy[1] == "0" {
		t.Errorf("otelbench_store_writer_busy_seconds_total %v, want positive after 3 commits", busy)
	}
	written := regexp.MustCompile(`(?m)^otelbench_projection_pages_total\{op="written"\} (\S+)`).FindStringSubmatch(text)
	if written == nil || written[1] == "0" {
		t.Errorf("otelbench_projection_pages_total{op=\"written\"} %v, want positive once 6 logs are projected", written)
	}
	fds := regexp.MustCompile(`(?m)^process_open_fds (\d+)`).FindAllStringSubmatch(text, -1)
	if len(fds) != 1 || fds[0][1] == "0" {
		t.Errorf("process_open_fds samples %v, want exactly one positive (procfd)", fds)
	}
	if strings.Count(text, "# HELP process_open_fds ") != 1 || !strings.Contains(text, "procfd") {
		t.Error("process_open_fds must come from procfd, once")
	}
}

// TestServeListenerError checks that a failing listener surfaces from Serve.
func TestServeListenerError(t *testing.T) {
	srv, err := New(context.Background(), Config{Config: store.Config{Dir: t.TempDir(), Logger: discard()}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // Accept fails at once
	if err := srv.Serve(context.Background(), ln); err == nil || errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve on a closed listener = %v, want the accept error", err)
	}
}

func TestHealthzDuringShutdown(t *testing.T) {
	ts := startServer(t, Config{})
	wantStatus(t, mustGet(t, ts.url+"/healthz"), 200)
	ts.draining.Store(true) // what Serve does first on cancel
	resp := mustGet(t, ts.url+"/healthz")
	wantStatus(t, resp, 503)
	resp = post(t, nil, ts.url+"/v1/traces", ctJSON, "", []byte("{}"))
	wantStatus(t, resp, 503)
	if resp.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if got := getStats(t, ts.url).Rejections["shutting_down"]; got != 1 {
		t.Errorf("shutting_down = %d, want 1", got)
	}
}

func mustGet(t *testing.T, url string) response {
	t.Helper()
	resp, err := send(nil, http.MethodGet, url, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestIngestLatencyHistogram: /metrics has a Prometheus histogram of ingest
// answers by signal, transport and status code, counting each request once,
// with cumulative buckets ending in +Inf.
func TestIngestLatencyHistogram(t *testing.T) {
	ts := startServer(t, Config{})
	for i := range 3 {
		wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", encode(t, otlptest.Logs(uint64(i), 2), otlpcodec.EncodingProto)), 200)
	}
	wantStatus(t, post(t, nil, ts.url+"/v1/traces", ctProto, "", encode(t, otlptest.Traces(0, 2, 0), otlpcodec.EncodingProto)), 200)
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", []byte("\xff")), 400)
	resp, err := send(nil, http.MethodGet, ts.url+"/metrics", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := string(resp.body)
	const name = "otelbench_ingest_request_duration_seconds"
	for _, want := range []string{
		"# TYPE " + name + " histogram",
		name + `_count{code="200",signal="logs",transport="http"} 3`,
		name + `_bucket{code="200",signal="logs",transport="http",le="+Inf"} 3`,
		name + `_count{code="200",signal="traces",transport="http"} 1`,
		name + `_count{code="400",signal="logs",transport="http"} 1`,
		name + `_count{code="200",signal="metrics",transport="http"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Buckets are cumulative: non-decreasing up to the count.
	re := regexp.MustCompile(name + `_bucket\{code="200",signal="logs",transport="http",le="[^"]+"\} (\d+)`)
	prev := -1
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		n := 0
		fmt.Sscan(m[1], &n)
		if n < prev {
			t.Errorf("bucket counts decrease: %d after %d", n, prev)
		}
		prev = n
	}
	if prev != 3 {
		t.Errorf("last bucket %d, want 3", prev)
	}
}
