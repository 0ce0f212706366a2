package loadgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/otlpgrpc/otlpgrpctest"
	"github.com/otelbench/otelbench/internal/signal"
)

// grpcOutcome is one planned answer of the gRPC accounting server.
type grpcOutcome struct {
	code     codes.Code
	retry    time.Duration // RetryInfo delay; 0: none
	rejected int64         // partial_success, for OK
	garbage  bool          // OK with an undecodable body
}

// startGRPCTestServer serves the three Export RPCs on loopback, answering
// each signal's requests in turn by plan, and returns its address.
func startGRPCTestServer(t *testing.T, plan []grpcOutcome) string {
	t.Helper()
	var mu sync.Mutex
	seen := map[signal.Signal]int{}
	return otlpgrpctest.ExportServer(t, func(sig signal.Signal) (any, error) {
		mu.Lock()
		o := plan[seen[sig]%len(plan)]
		seen[sig]++
		mu.Unlock()
		switch {
		case o.code != codes.OK:
			st := status.New(o.code, "planned")
			if o.retry > 0 {
				st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(o.retry)})
			}
			return nil, st.Err()
		case o.garbage:
			return otlpgrpc.Raw([]byte("\xff\xff\xff not a response")), nil
		}
		b, err := otlpcodec.Response(sig, otlpcodec.EncodingProto, o.rejected, "")
		if err != nil {
			return nil, err
		}
		return otlpgrpc.Raw(b), nil
	})
}

// TestGRPCAccountingExact runs a planned mix of gRPC answers and checks
// every count: codes, their HTTP classes, records acked and rejected.
func TestGRPCAccountingExact(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		plan := []grpcOutcome{
			{code: codes.OK}, {code: codes.OK, rejected: 3}, {code: codes.Unavailable, retry: time.Second},
			{code: codes.InvalidArgument}, {code: codes.ResourceExhausted}, {code: codes.ResourceExhausted, retry: time.Second},
			{code: codes.OK, garbage: true}, {code: codes.Unauthenticated}, {code: codes.OK, rejected: 1},
		}
		const cycles, records = 4, 7
		perSignal := int64(cycles * len(plan))
		for _, comp := range []otlpgen.Compression{otlpgen.CompressionNone, otlpgen.CompressionZstd, otlpgen.CompressionGzip} {
			t.Run(string(comp), func(t *testing.T) {
				addr := startGRPCTestServer(t, plan)
				rep, err := Run(context.Background(), Config{
					Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: addr, Insecure: true, Requests: 3 * perSignal, Concurrency: 4, Connections: 2,
					Payload: otlpgen.Config{Records: records, PoolSize: 2, Compression: comp},
				})
				if err != nil {
					t.Fatal(err)
				}
				var want SignalStats
				wantCodes := map[string]int64{}
				for _, o := range plan {
					want.Status.add(httpStatus(planStatus(o)))
					wantCodes[otlpgrpc.CodeName(o.code)] += cycles
					if o.code == codes.OK {
						want.RecordsAcked += cycles * (records - o.rejected)
						want.RecordsRejected += cycles * o.rejected
					}
				}
				want.Status = scale(want.Status, cycles)
				for _, name := range signalNames() {
					got := rep.Signals[name]
					if got.Requests != perSignal || got.Status != want.Status || got.TransportErrors != 0 ||
						got.RecordsAcked != want.RecordsAcked || got.RecordsRejected != want.RecordsRejected ||
						got.ResponseDecodeErrors != cycles || got.Histogram.Count != perSignal {
						t.Errorf("%s: got requests %d status %+v transport %d acked %d rejected %d decode errors %d latencies %d;\n"+
							"want %d, %+v, 0, %d, %d, %d, %d", name, got.Requests, got.Status, got.TransportErrors, got.RecordsAcked,
							got.RecordsRejected, got.ResponseDecodeErrors, got.Histogram.Count,
							perSignal, want.Status, want.RecordsAcked, want.RecordsRejected, cycles, perSignal)
					}
					for code, n := range wantCodes {
						if got.GRPCStatus[code] != n {
							t.Errorf("%s grpc_status[%s] = %d, want %d", name, code, got.GRPCStatus[code], n)
						}
					}
				}
			})
		}
	})
}

func planStatus(o grpcOutcome) *status.Status {
	st := status.New(o.code, "")
	if o.retry > 0 {
		st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(o.retry)})
	}
	return st
}

// TestGRPCRetryHonoursRetryInfo refuses every first attempt with
// UNAVAILABLE and a RetryInfo delay: each request is retried once, no
// sooner than the delay.
func TestGRPCRetryHonoursRetryInfo(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		const delay = 150 * time.Millisecond
		addr := startGRPCTestServer(t, []grpcOutcome{{code: codes.Unavailable, retry: delay}, {code: codes.OK}})
		const requests = 4
		start := time.Now()
		rep, err := Run(context.Background(), Config{
			Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: addr, Insecure: true, Requests: requests, Concurrency: 1, Retry: 3,
			Mix: Mix{1, 0, 0}, Payload: otlpgen.Config{Records: 2, PoolSize: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		logs := rep.Signals["logs"]
		if logs.Requests != 2*requests || logs.Retries != requests || logs.GRPCStatus["UNAVAILABLE"] != requests ||
			logs.GRPCStatus["OK"] != requests || logs.RecordsAcked != 2*requests {
			t.Errorf("got requests %d retries %d codes %v acked %d, want %d, %d, UNAVAILABLE and OK %d each, %d",
				logs.Requests, logs.Retries, logs.GRPCStatus, logs.RecordsAcked, 2*requests, requests, requests, 2*requests)
		}
		// A lower bound only: the run cannot be faster than its waits.
		if elapsed := time.Since(start); elapsed < requests*delay {
			t.Errorf("run took %v, want at least %v (%d RetryInfo waits of %v)", elapsed, requests*delay, requests, delay)
		}
	})
}

// TestGRPCTransportErrors loads an address nobody listens on: every
// attempt is a transport error, not a status.
func TestGRPCTransportErrors(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		rep, err := Run(context.Background(), Config{
			Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: addr, Insecure: true, Requests: 6, Concurrency: 2, Timeout: 2 * time.Second,
			Payload: otlpgen.Config{Records: 1, PoolSize: 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Totals; got.TransportErrors != 6 || got.Status.Other+got.Status.S503 != 0 || len(got.GRPCStatus) != 0 {
			t.Errorf("got transport errors %d, statuses %+v, codes %v; want 6 transport errors and no status", got.TransportErrors, got.Status, got.GRPCStatus)
		}
		if err := rep.CheckErrorRate(1); !errors.Is(err, ErrTooManyErrors) {
			t.Errorf("CheckErrorRate = %v, want ErrTooManyErrors (nothing answered)", err)
		}
	})
}

// TestGRPCCutOffCall answers the first call with a raw HTTP/2 peer that
// closes the connection after reading it: the call counts as a transport
// error when nothing came back, and as the status it ended with
// (UNAVAILABLE) when the peer had sent a gRPC response's headers.
func TestGRPCCutOffCall(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		for _, tc := range []struct {
			name          string
			sendHeader    bool
			wantTransport int64
			wantCodes     map[string]int64
		}{
			{name: "before headers", wantTransport: 1, wantCodes: map[string]int64{}},
			{name: "after headers", sendHeader: true, wantCodes: map[string]int64{"UNAVAILABLE": 1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				peer := make(chan error, 1)
				go func() { peer <- cutOffPeer(ln, tc.sendHeader) }()
				rep, err := Run(context.Background(), Config{
					Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: ln.Addr().String(), Insecure: true, Requests: 1, Concurrency: 1,
					Timeout: 5 * time.Second, Mix: Mix{1, 0, 0}, Payload: otlpgen.Config{Records: 1, PoolSize: 1},
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := <-peer; err != nil {
					t.Fatalf("HTTP/2 peer: %v", err)
				}
				got := rep.Totals
				if got.Requests != 1 || got.TransportErrors != tc.wantTransport || !maps.Equal(got.GRPCStatus, tc.wantCodes) {
					t.Errorf("got requests %d, transport errors %d, codes %v; want 1, %d, %v",
						got.Requests, got.TransportErrors, got.GRPCStatus, tc.wantTransport, tc.wantCodes)
				}
			})
		}
	})
}

// cutOffPeer accepts one connection, speaks HTTP/2 until the first
// request's message has arrived, writes a gRPC response's headers if
// sendHeader, and closes the connection.
func cutOffPeer(ln net.Listener, sendHeader bool) error {
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return err
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					return err
				}
			}
		case *http2.DataFrame:
			if !f.StreamEnded() {
				continue
			}
			if sendHeader {
				var block bytes.Buffer
				enc := hpack.NewEncoder(&block)
				_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// TestGRPCAgainstServe loads a real otelbench server over gRPC, on its gRPC
// listener and on its HTTP one: the records acked are exactly the records
// the server stored.
func TestGRPCAgainstServe(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		for _, listener := range []string{"grpc", "http"} {
			t.Run(listener, func(t *testing.T) {
				serve := startServe(t, ingestsrv.Config{})
				endpoint := serve.grpcAddr
				if listener == "http" {
					endpoint = serve.url
				}
				rep, err := Run(context.Background(), Config{
					Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: endpoint, Insecure: true, Requests: 300, Concurrency: 8,
					Payload: otlpgen.Config{Records: 10, PoolSize: 4},
				})
				if err != nil {
					t.Fatal(err)
				}
				stored := serve.stop()
				for _, name := range signalNames() {
					if got, want := int64(stored[name]), rep.Signals[name].RecordsAcked; got != want || want == 0 {
						t.Errorf("%s: server stored %d records, load acked %d; want equal and > 0", name, got, want)
					}
				}
				if rep.Totals.Errors() != 0 {
					t.Errorf("%d requests failed, want 0 (codes %v)", rep.Totals.Errors(), rep.Totals.GRPCStatus)
				}
			})
		}
	})
}

func TestGRPCConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // "" valid, else a substring of the error
	}{
		{"host:port", Config{Protocol: ProtocolGRPC, Endpoint: "127.0.0.1:4317"}, ""},
		{"http url", Config{Protocol: ProtocolGRPC, Endpoint: "http://localhost:4317"}, ""},
		{"https url", Config{Protocol: ProtocolGRPC, Endpoint: "https://collector.example:4317"}, ""},
		{"default endpoint", Config{Protocol: ProtocolGRPC}, ""},
		{"zstd", Config{Protocol: ProtocolGRPC, Payload: otlpgen.Config{Compression: otlpgen.CompressionZstd}, Times: TimesLive}, ""},
		{"path", Config{Protocol: ProtocolGRPC, Endpoint: "http://localhost:4317/v1"}, "no path"},
		{"no port", Config{Protocol: ProtocolGRPC, Endpoint: "localhost"}, "host:port"},
		{"json", Config{Protocol: ProtocolGRPC, Payload: otlpgen.Config{Encoding: otlpgen.EncodingJSON}}, "protobuf only"},
		{"sender", Config{Protocol: ProtocolGRPC, Sender: SenderH1}, "own"},
		{"too many connections", Config{Protocol: ProtocolGRPC, Concurrency: 2, Connections: 3}, "connections"},
		{"connections over http", Config{Connections: 2}, "grpc only"},
		{"unknown", Config{Protocol: "thrift"}, "protocol"},
		{"lean client", Config{Protocol: ProtocolGRPC, Endpoint: "http://localhost:4317", GRPCClient: GRPCClientLean}, ""},
		{"lean client over TLS", Config{Protocol: ProtocolGRPC, Endpoint: "https://localhost:4317", GRPCClient: GRPCClientLean}, "plain text only"},
		{"grpc-go client over TLS", Config{Protocol: ProtocolGRPC, Endpoint: "https://localhost:4317", GRPCClient: GRPCClientGo}, ""},
		{"unknown client", Config{Protocol: ProtocolGRPC, GRPCClient: "netty"}, "grpc client"},
		{"grpc client over http", Config{GRPCClient: GRPCClientGo}, "grpc only"},
		{"http/protobuf", Config{Protocol: ProtocolHTTPProtobuf}, ""},
		{"per-signal endpoint", Config{Protocol: ProtocolGRPC, SignalEndpoints: [signal.Count]string{"", "", "http://localhost:4317"}}, "per-signal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want an error containing %q", err, tt.want)
			case err != nil && !errors.Is(err, ErrInvalidConfig):
				t.Errorf("Validate = %v, want it to wrap ErrInvalidConfig", err)
			}
		})
	}
}

// TestGRPCTarget: an endpoint's scheme says TLS or not; host:port alone speaks TLS unless
// insecure, as the exporters read OTEL_EXPORTER_OTLP_ENDPOINT and _INSECURE.
func TestGRPCTarget(t *testing.T) {
	tests := []struct {
		endpoint   string
		insecure   bool
		wantTarget string
		wantTLS    bool
	}{
		{"127.0.0.1:4317", false, "127.0.0.1:4317", true},
		{"127.0.0.1:4317", true, "127.0.0.1:4317", false},
		{"http://collector:4317", false, "collector:4317", false},
		{"https://collector:4317", true, "collector:4317", true},
		{"https://collector:4317/", false, "collector:4317", true},
	}
	for _, tt := range tests {
		target, tls, err := grpcTarget(tt.endpoint, tt.insecure)
		if err != nil || target != tt.wantTarget || tls != tt.wantTLS {
			t.Errorf("grpcTarget(%q, insecure %v) = %q, TLS %v, %v; want %q, %v, nil",
				tt.endpoint, tt.insecure, target, tls, err, tt.wantTarget, tt.wantTLS)
		}
	}
}

// forGRPCClients runs f as a subtest for each gRPC client: both must
// account the same way.
func forGRPCClients(t *testing.T, f func(t *testing.T, client GRPCClient)) {
	for _, c := range []GRPCClient{GRPCClientLean, GRPCClientGo} {
		t.Run(string(c), func(t *testing.T) { f(t, c) })
	}
}
