package loadgen

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// TestGRPCServeAnswers loads otelbench's server configured to answer each
// of the gRPC statuses load must tell apart, with both clients: the codes
// counted are the ones expected, nothing is a transport error, and the
// records acked are exactly the records stored.
func TestGRPCServeAnswers(t *testing.T) {
	tests := []struct {
		name     string
		srv      ingestsrv.Config
		load     Config
		wantCode string // every final answer's code
		retries  bool   // some UNAVAILABLE answers are retried first
	}{
		{name: "ok, larger than the 64 KiB windows", load: Config{Payload: otlpgen.Config{Records: 500, PoolSize: 2}}, wantCode: "OK"},
		{name: "over the size limit", srv: ingestsrv.Config{GRPC: ingestsrv.GRPCConfig{MaxRecv: 4 << 10}},
			load: Config{Payload: otlpgen.Config{Records: 200, PoolSize: 2}}, wantCode: "RESOURCE_EXHAUSTED"},
		{name: "unauthenticated", srv: ingestsrv.Config{AuthToken: "s3cret", AuthIngest: true}, wantCode: "UNAUTHENTICATED"},
		{name: "authenticated", srv: ingestsrv.Config{AuthToken: "s3cret", AuthIngest: true},
			load: Config{Header: http.Header{"Authorization": {"Bearer s3cret"}}}, wantCode: "OK"},
		{name: "two streams a connection", srv: ingestsrv.Config{GRPC: ingestsrv.GRPCConfig{MaxStreams: 2}},
			load: Config{Concurrency: 16, Connections: 1}, wantCode: "OK"},
		{name: "overloaded, retried after RetryInfo", srv: ingestsrv.Config{GRPC: ingestsrv.GRPCConfig{MaxRequests: 1}},
			load: Config{Concurrency: 16, Retry: 100, RetryMaxWait: 20 * time.Millisecond}, wantCode: "OK", retries: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forGRPCClients(t, func(t *testing.T, client GRPCClient) {
				serve := startServe(t, tt.srv)
				cfg := tt.load
				cfg.Protocol, cfg.GRPCClient, cfg.Endpoint, cfg.Insecure, cfg.Requests = ProtocolGRPC, client, serve.grpcAddr, true, 120
				cfg.Concurrency = max(cfg.Concurrency, 4)
				cfg.Payload.Records = max(cfg.Payload.Records, 10)
				cfg.Payload.PoolSize = max(cfg.Payload.PoolSize, 4)
				rep, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				stored := serve.stop()
				got := rep.Totals
				final := got.Requests - got.Retries
				if got.TransportErrors != 0 || final != 120 || got.GRPCStatus[tt.wantCode] != final {
					t.Errorf("got %d requests (%d retries), %d transport errors, codes %v; want 120 answered %s",
						got.Requests, got.Retries, got.TransportErrors, got.GRPCStatus, tt.wantCode)
				}
				if tt.retries && (got.Retries == 0 || got.GRPCStatus["UNAVAILABLE"] != got.Retries) {
					t.Errorf("got %d retries, codes %v; want UNAVAILABLE answers, each retried", got.Retries, got.GRPCStatus)
				}
				for name, s := range rep.Signals {
					if uint64(s.RecordsAcked) != stored[name] {
						t.Errorf("%s: load acked %d records, server stored %d; want equal", name, s.RecordsAcked, stored[name])
					}
				}
			})
		})
	}
}

// TestGRPCServeGracefulStop stops the server (SIGTERM's drain: GOAWAY)
// in the middle of a load: calls in flight are answered, the rest fail
// without an answer, and the records acked are exactly the records stored.
func TestGRPCServeGracefulStop(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		serve := startServe(t, ingestsrv.Config{})
		stopped := make(chan map[string]uint64, 1)
		go func() {
			time.Sleep(300 * time.Millisecond)
			stopped <- serve.stop()
		}()
		rep, err := Run(context.Background(), Config{
			Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: serve.grpcAddr, Insecure: true, Duration: 1200 * time.Millisecond,
			Concurrency: 8, Timeout: 2 * time.Second, Payload: otlpgen.Config{Records: 10, PoolSize: 4},
		})
		if err != nil {
			t.Fatal(err)
		}
		stored := <-stopped
		if rep.Totals.GRPCStatus["OK"] == 0 || rep.Totals.TransportErrors == 0 {
			t.Errorf("got codes %v, %d transport errors; want OK answers before the stop and failures after",
				rep.Totals.GRPCStatus, rep.Totals.TransportErrors)
		}
		for name, s := range rep.Signals {
			if uint64(s.RecordsAcked) != stored[name] {
				t.Errorf("%s: load acked %d records, server stored %d; want equal", name, s.RecordsAcked, stored[name])
			}
		}
	})
}

func TestProcs(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want int
	}{
		{"lean, one worker", Config{Protocol: ProtocolGRPC, Endpoint: "http://127.0.0.1:4317", Concurrency: 1}, 1},
		{"lean, default workers", Config{Protocol: ProtocolGRPC, Endpoint: "127.0.0.1:4317", Insecure: true}, DefaultConcurrency},
		{"grpc-go", Config{Protocol: ProtocolGRPC, Endpoint: "http://127.0.0.1:4317", Concurrency: 1, GRPCClient: GRPCClientGo}, 0},
		{"TLS", Config{Protocol: ProtocolGRPC, Endpoint: "https://127.0.0.1:4317", Concurrency: 1}, 0},
		{"open model", Config{Protocol: ProtocolGRPC, Endpoint: "http://127.0.0.1:4317", Concurrency: 1, Rate: 100}, 0},
		{"http", Config{Concurrency: 1}, 0},
	}
	for _, tt := range tests {
		if got := tt.cfg.Procs(); got != tt.want {
			t.Errorf("%s: Procs() = %d, want %d", tt.name, got, tt.want)
		}
	}
}
