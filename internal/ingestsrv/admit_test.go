package ingestsrv

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/polltest"
)

// holdSlots opens n idle connections and waits until the server has
// admitted all of them, so every later connection is past MaxConns.
func holdSlots(t *testing.T, ts *testServer, n int) {
	t.Helper()
	polltest.Until(t, "listener", func() bool { return ts.admit.Load() != nil })
	for range n {
		c, err := net.Dial("tcp", ts.url[len("http://"):])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	polltest.Until(t, "connections admitted", func() bool { return len(ts.admit.Load().slots) == n })
}

// TestConnLimit503 fills every connection slot, then checks what a client
// past the limit gets: 503, Retry-After, Connection: close and an
// UNAVAILABLE google.rpc.Status in the request's encoding, even when it sends
// a body much larger than the rejecter reads (drained, not reset).
func TestConnLimit503(t *testing.T) {
	ts := startServer(t, Config{MaxConns: 2})
	holdSlots(t, ts, 2)
	big := encode(t, otlptest.Logs(0, 2000), otlpcodec.EncodingProto)
	if len(big) < 4*rejectBufBytes {
		t.Fatalf("fixture is %d bytes, want a body far beyond the rejecter's buffer", len(big))
	}
	tests := []struct {
		name string
		enc  otlpcodec.Encoding
		body []byte
	}{
		{"protobuf", otlpcodec.EncodingProto, encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingProto)},
		{"json", otlpcodec.EncodingJSON, encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingJSON)},
		{"large body", otlpcodec.EncodingProto, big},
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, client, ts.url+"/v1/logs", tt.enc.ContentType(), "", tt.body)
			wantStatus(t, resp, http.StatusServiceUnavailable)
			if ra, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("Retry-After = %q, want a positive number of seconds", resp.header.Get("Retry-After"))
			}
			if got := resp.header.Get("Content-Type"); got != tt.enc.ContentType() {
				t.Errorf("Content-Type %q, want %q", got, tt.enc.ContentType())
			}
			if code, _, err := otlpcodec.ParseStatus(tt.enc, resp.body); err != nil || code != otlpcodec.CodeUnavailable {
				t.Errorf("status body code %d (%v), want UNAVAILABLE", code, err)
			}
		})
	}
	// Not over HTTP (every slot is taken); a rejecter counts after the
	// client has read its answer and closed, so wait for the count.
	polltest.Until(t, "conn_limit counted", func() bool { return ts.Stats().Rejections["conn_limit"] >= uint64(len(tests)) })
	if got := ts.Stats().Rejections["conn_limit"]; got != uint64(len(tests)) {
		t.Errorf("conn_limit rejections %d, want %d", got, len(tests))
	}
	if got := ts.Store().Stats().Logs.Requests; got != 0 {
		t.Errorf("stored %d requests, want 0", got)
	}
}

// TestConnLimitRefusesPastRejecters: with the only rejecter busy (a client
// that connected and sent nothing), the next excess connection is closed at
// once, unanswered, and counted as conn_refused.
func TestConnLimitRefusesPastRejecters(t *testing.T) {
	ts := startServer(t, Config{MaxConns: 1, MaxRejecting: 1})
	holdSlots(t, ts, 1)
	silent, err := net.Dial("tcp", ts.url[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	polltest.Until(t, "rejecter busy", func() bool { return len(ts.admit.Load().rejecters) == 1 })

	c, err := net.Dial("tcp", ts.url[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// The write may or may not fail (the close races it); the read must
	// end without an answer.
	_, _ = c.Write([]byte("POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
	b, err := io.ReadAll(c)
	if len(b) != 0 {
		t.Errorf("read %q from a refused connection, want nothing", b)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("refused connection was not closed: %v", err)
	}
	polltest.Until(t, "conn_refused counted", func() bool { return ts.Stats().Rejections["conn_refused"] == 1 })
	// The silent client gets no answer either: it sent no request.
	polltest.Until(t, "silent client released", func() bool { return len(ts.admit.Load().rejecters) == 0 })
	if got := ts.Stats().Rejections["conn_limit"]; got != 0 {
		t.Errorf("conn_limit %d, want 0 (no request was answered 503)", got)
	}
}

// TestConnLimitStorm sends more concurrent clients than MaxConns, each on
// fresh connections: every request gets 200 or 503 with Retry-After (no
// transport error), the 503s past the limit are counted, and what was
// acked is exactly what was stored.
func TestConnLimitStorm(t *testing.T) {
	const (
		maxConns  = 4
		clients   = 32
		perClient = 20
	)
	// MaxRejecting above the number of requests: a rejecter lingers until
	// its client closes, so a smaller bound could refuse some outright
	// (TestConnLimitRefusesPastRejecters covers that path).
	ts := startServer(t, Config{MaxConns: maxConns, MaxRejecting: 2 * clients * perClient})
	holdSlots(t, ts, maxConns-1) // one slot left: the storm must overflow it
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	var (
		mu     sync.Mutex
		status = map[int]int{}
		errs   []error
		acked  int
		wg     sync.WaitGroup
	)
	// Encoded on the test goroutine: encode may t.Fatal, which must not run on a client's.
	bodies := make([][]byte, clients*perClient)
	for seq := range bodies {
		bodies[seq] = encode(t, otlptest.Logs(uint64(seq), 1), otlpcodec.EncodingProto)
	}
	for i := range clients {
		wg.Go(func() {
			for j := range perClient {
				body := bodies[i*perClient+j]
				resp, err := send(client, http.MethodPost, ts.url+"/v1/logs", ctProto, "", bytes.NewReader(body))
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case resp.status == http.StatusOK:
					acked++
				case resp.status == http.StatusServiceUnavailable && resp.header.Get("Retry-After") == "":
					errs = append(errs, errors.New("503 without Retry-After"))
				}
				status[resp.status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed without a 200 or a 503 + Retry-After; first: %v; %v %v", len(errs), clients*perClient, errs[0], status, ts.Stats().Rejections)
	}
	if status[http.StatusOK]+status[http.StatusServiceUnavailable] != clients*perClient {
		t.Errorf("statuses %v, want only 200 and 503", status)
	}
	if status[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no 503 from %d clients on %d free slot(s): the limit did not bite", clients, 1)
	}
	polltest.Until(t, "rejecters done", func() bool { return len(ts.admit.Load().rejecters) == 0 })
	st := ts.Stats()
	if got := st.Rejections["conn_limit"] + st.Rejections["queue_full"]; got != uint64(status[http.StatusServiceUnavailable]) {
		t.Errorf("503 rejections counted %d, clients saw %d", got, status[http.StatusServiceUnavailable])
	}
	if got := ts.Store().Stats().Logs.Records; got != uint64(acked) {
		t.Errorf("stored %d records, acked %d", got, acked)
	}
}

func TestParseHead(t *testing.T) {
	tests := []struct {
		name       string
		head       string
		wantJSON   bool
		wantLength int64
	}{
		{"protobuf", "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 12", false, 12},
		{"json, odd case and spaces", "POST /v1/logs HTTP/1.1\r\ncontent-type:  application/json; charset=utf-8\r\ncontent-length:7", true, 7},
		{"no length", "POST /v1/logs HTTP/1.1\r\nHost: x", false, -1},
		{"chunked wins over length", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5", false, -1},
		{"invalid length", "POST / HTTP/1.1\r\nContent-Length: -3", false, -1},
		{"unknown type", "POST / HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 0", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			json, length := parseHead([]byte(tt.head))
			if json != tt.wantJSON || length != tt.wantLength {
				t.Errorf("got json=%v length=%d, want %v and %d", json, length, tt.wantJSON, tt.wantLength)
			}
		})
	}
}
