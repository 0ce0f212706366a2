package ingestsrv

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestGRPCRoundTrip exports every signal with every compressor over gRPC,
// on the gRPC listener and on the HTTP one, and finds every record
// projected and counted under the grpc transport.
func TestGRPCRoundTrip(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	signals := []struct {
		sig   signal.Signal
		req   message
		n     int
		table string
	}{
		{signal.Logs, otlptest.Logs(0, 3), 3, "SELECT count(*) FROM logs"},
		{signal.Traces, otlptest.Traces(0, 4, 0), 4, "SELECT count(*) FROM spans"},
		{signal.Metrics, otlptest.Metrics(0, 10, 0), 10,
			`SELECT (SELECT count(*) FROM number_points) + (SELECT count(*) FROM histogram_points) +
			        (SELECT count(*) FROM exp_histogram_points) + (SELECT count(*) FROM summary_points)`},
	}
	listeners := map[string]string{"grpc-listener": ts.grpcAddr, "http-listener": strings.TrimPrefix(ts.url, "http://")}
	compressors := []string{"", otlpgrpc.CompressorGzip, otlpgrpc.CompressorZstd, otlpgrpc.CompressorSnappy}
	want := map[signal.Signal]int{}
	requests := 0
	for name, addr := range listeners {
		cc := dialRaw(t, addr)
		for _, comp := range compressors {
			for _, sc := range signals {
				t.Run(fmt.Sprintf("%s/%v/%q", name, sc.sig, comp), func(t *testing.T) {
					var opts []grpc.CallOption
					if comp != "" {
						opts = append(opts, grpc.UseCompressor(comp))
					}
					reply, st := export(t, cc, sc.sig, encode(t, sc.req, otlpcodec.EncodingProto), opts...)
					wantCode(t, st, codes.OK)
					if rejected, msg := parseResponse(t, sc.sig, otlpcodec.EncodingProto, reply); rejected != 0 || msg != "" {
						t.Errorf("partial_success rejected=%d message=%q, want none", rejected, msg)
					}
					want[sc.sig] += sc.n
					requests++
				})
			}
		}
	}
	waitProjected(t, ts.Store())
	db := ts.Store().ReadDB()
	for _, sc := range signals {
		if got := count(t, db, sc.table); got != want[sc.sig] {
			t.Errorf("%v: %d projected rows, want %d", sc.sig, got, want[sc.sig])
		}
	}
	st := getStats(t, ts.url)
	g, h := st.Transports[TransportGRPC], st.Transports[TransportHTTP]
	if g.Requests != uint64(requests) || h.Requests != 0 {
		t.Errorf("transports: grpc %d requests, http %d; want %d and 0", g.Requests, h.Requests, requests)
	}
}

// TestGRPCStatusCodes checks each refusal's code, its RetryInfo, and the
// rejection counted under the grpc transport.
func TestGRPCStatusCodes(t *testing.T) {
	logs := encode(t, otlptest.Logs(1, 2), otlpcodec.EncodingProto)
	tests := []struct {
		name      string
		cfg       Config
		setup     func(*grpcServer) func() // returns the undo
		body      []byte
		md        []string
		want      codes.Code
		wantRetry bool
		reason    string
	}{
		{name: "ok", body: logs, want: codes.OK},
		{name: "malformed", body: []byte("\x0a\xff\xff\xff"), want: codes.InvalidArgument, reason: "decode"},
		{name: "too large", cfg: Config{GRPC: GRPCConfig{MaxRecv: 1 << 10}}, body: bytes.Repeat([]byte{0}, 2<<10),
			want: codes.ResourceExhausted, reason: "too_large"},
		{name: "no token", cfg: Config{AuthToken: "s3cret", AuthIngest: true}, body: logs,
			want: codes.Unauthenticated, reason: "unauthorized"},
		{name: "wrong token", cfg: Config{AuthToken: "s3cret", AuthIngest: true}, body: logs,
			md: []string{"authorization", "Bearer nope"}, want: codes.Unauthenticated, reason: "unauthorized"},
		{name: "token", cfg: Config{AuthToken: "s3cret", AuthIngest: true}, body: logs,
			md: []string{"authorization", "Bearer s3cret"}, want: codes.OK},
		{name: "budget spent", body: logs, want: codes.Unavailable, wantRetry: true, reason: "queue_full",
			setup: func(ts *grpcServer) func() {
				ts.budget.used.Add(ts.budget.max)
				return func() { ts.budget.used.Add(-ts.budget.max) }
			}},
		{name: "requests cap", body: logs, want: codes.Unavailable, wantRetry: true, reason: "queue_full",
			setup: func(ts *grpcServer) func() {
				ts.g.inflight.Add(ts.maxRequests())
				return func() { ts.g.inflight.Add(-ts.maxRequests()) }
			}},
		{name: "draining", body: logs, want: codes.Unavailable, wantRetry: true, reason: "shutting_down",
			setup: func(ts *grpcServer) func() {
				ts.draining.Store(true)
				return func() { ts.draining.Store(false) }
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startGRPCServer(t, tt.cfg)
			if tt.setup != nil {
				defer tt.setup(ts)()
			}
			for name, addr := range map[string]string{"grpc": ts.grpcAddr, "http": strings.TrimPrefix(ts.url, "http://")} {
				cc := dialRaw(t, addr)
				_, st := exportMD(t, cc, signal.Logs, tt.body, tt.md)
				if st.Code() != tt.want {
					t.Fatalf("%s listener: code %v (%q), want %v", name, st.Code(), st.Message(), tt.want)
				}
				if got := retryDelay(st) > 0; got != tt.wantRetry {
					t.Errorf("%s listener: RetryInfo present = %v (%v), want %v", name, got, retryDelay(st), tt.wantRetry)
				}
			}
			if tt.reason == "" {
				return
			}
			if got := ts.Stats().Transports[TransportGRPC].Rejections[tt.reason]; got != 2 {
				t.Errorf("grpc rejections[%s] = %d, want 2", tt.reason, got)
			}
		})
	}
}

// TestGRPCPartialSuccess sends spans of which some are invalid: OK with
// partial_success, the valid ones stored.
func TestGRPCPartialSuccess(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	cc := dialRaw(t, ts.grpcAddr)
	reply, st := export(t, cc, signal.Traces, encode(t, otlptest.Traces(2, 5, 2), otlpcodec.EncodingProto))
	wantCode(t, st, codes.OK)
	rejected, msg := parseResponse(t, signal.Traces, otlpcodec.EncodingProto, reply)
	if rejected != 2 || msg == "" {
		t.Errorf("partial_success rejected=%d message=%q, want 2 and a message", rejected, msg)
	}
	if got := ts.Stats().Signals["traces"].Records; got != 5 {
		t.Errorf("stored %d spans, want 5", got)
	}
}

// holdIdleConn opens an HTTP connection to the server at url and leaves it open and idle,
// holding a connection slot until release closes it (or the test ends).
func holdIdleConn(t *testing.T, url string) (release func()) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return client.CloseIdleConnections
}
