package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// BenchmarkReadResponse measures parsing a typical OTLP 200 answer.
func BenchmarkReadResponse(b *testing.B) {
	in := "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nDate: Sun, 29 Nov 2026 20:00:00 GMT\r\nContent-Length: 0\r\n\r\n"
	var rd strings.Reader
	br := bufio.NewReader(nil)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(in)
		br.Reset(&rd)
		if _, _, err := readResponse(br, &buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAccounting measures recording one answered request.
func BenchmarkAccounting(b *testing.B) {
	a := newSignalAcc(true)
	at := attempt{status: 200, records: 100, bytes: 20000}
	b.ReportAllocs()
	for b.Loop() {
		a.recordAttempt(at, false)
		a.recordLatency(750*time.Microsecond, 500*time.Microsecond, false)
	}
}

// BenchmarkRun sends b.N requests of 10 logs per sender to an in-process
// discarding server (its CPU is included: compare senders, not absolutes;
// scripts/bench-load.sh measures the generator alone).
func BenchmarkRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	for _, s := range []Sender{SenderEpoll, SenderH1, SenderNetHTTP} {
		for _, times := range []Times{TimesLive, TimesReplay} {
			b.Run(string(s)+"/"+string(times), func(b *testing.B) {
				_, err := Run(context.Background(), Config{Endpoint: srv.URL, Requests: int64(b.N), Concurrency: 8, Sender: s,
					Times: times, Mix: Mix{1, 0, 0}, Payload: otlpgen.Config{Records: 10, PoolSize: 2}})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
