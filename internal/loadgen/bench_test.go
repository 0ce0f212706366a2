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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/otlpgrpc/otlpgrpctest"
	"github.com/otelbench/otelbench/internal/signal"
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

// BenchmarkGRPCSend sends one 100-record logs request at a time to an
// in-process gRPC server that answers an empty response (its CPU and
// allocations are included). "exchanger" is the load's gRPC sender; "bare"
// is grpc-go's Invoke with only the raw codec, the floor any gRPC client on
// grpc-go pays: their difference is the sender's own cost.
func BenchmarkGRPCSend(b *testing.B) {
	gs := grpc.NewServer(grpc.ForceServerCodecV2(otlpgrpc.Codec{}))
	gs.RegisterService(otlpgrpc.ServiceDesc(signal.Logs, otlpgrpc.Discard), nil)
	addr := otlpgrpctest.Serve(b, gs)
	pool, err := otlpgen.NewPool(otlpgen.Config{Records: 100, PoolSize: 1}, signal.Logs)
	if err != nil {
		b.Fatal(err)
	}
	p := pool.Get(signal.Logs, 0)
	cfg := Config{Protocol: ProtocolGRPC, Endpoint: addr, Insecure: true, Concurrency: 1, Timeout: 10 * time.Second}
	s, err := newGRPCSender(cfg, otlpgen.CompressionNone)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	b.Run("exchanger", func(b *testing.B) {
		ex := s.exchanger(cfg)
		defer ex.close()
		var buf bytes.Buffer
		b.ReportAllocs()
		b.SetBytes(int64(len(p.Body)))
		for b.Loop() {
			if resp, err := ex.send(context.Background(), p, p.Body, &buf); err != nil || resp.status != 200 {
				b.Fatalf("send: status %d, error %v", resp.status, err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		method := otlpgrpc.Method(signal.Logs)
		codec := grpc.ForceCodecV2(otlpgrpc.Codec{})
		b.ReportAllocs()
		b.SetBytes(int64(len(p.Body)))
		for b.Loop() {
			var reply otlpgrpc.Message
			if err := cc.Invoke(context.Background(), method, otlpgrpc.Raw(p.Body), &reply, codec); err != nil {
				b.Fatal(err)
			}
			reply.Free()
		}
	})
}
