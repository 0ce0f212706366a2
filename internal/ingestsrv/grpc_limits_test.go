package ingestsrv

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestGRPCRequestLimits: the limits on what one request may hold apply to
// gRPC as to HTTP, through the same commit: too many records and a decode
// cost over the whole budget are RESOURCE_EXHAUSTED without RetryInfo (the
// equivalent of 413: not retried), a value nested too deep is
// INVALID_ARGUMENT; each message names its limit, nothing is stored, and
// the rejection is counted under the grpc transport.
func TestGRPCRequestLimits(t *testing.T) {
	const maxBody = 64 << 10
	costly := encode(t, otlptest.Traces(0, 400, 2), otlpcodec.EncodingProto) // rejected spans: decoded with pdata
	if len(costly) < maxBody/2 || len(costly) > maxBody {
		t.Fatalf("costly body is %d bytes, want within (%d, %d]", len(costly), maxBody/2, maxBody)
	}
	tests := []struct {
		name    string
		cfg     Config
		sig     signal.Signal
		body    []byte
		want    codes.Code
		reason  string
		wantMsg string
	}{
		{"at the record limit", Config{MaxRecords: 5}, signal.Logs, encode(t, otlptest.Logs(0, 5), otlpcodec.EncodingProto), codes.OK, "", ""},
		{"one record over", Config{MaxRecords: 5}, signal.Logs, encode(t, otlptest.Logs(0, 6), otlpcodec.EncodingProto),
			codes.ResourceExhausted, "too_many_records", "limit of 5 a request (--max-records)"},
		{"over with rejected spans", Config{MaxRecords: 5}, signal.Traces, encode(t, otlptest.Traces(0, 4, 2), otlpcodec.EncodingProto),
			codes.ResourceExhausted, "too_many_records", "--max-records"},
		{"nested at the limit", Config{}, signal.Logs, encode(t, otlptest.NestedLogs((otlpwire.RecursionLimit-1)/2, false), otlpcodec.EncodingProto),
			codes.OK, "", ""},
		{"nested too deep", Config{}, signal.Logs, encode(t, otlptest.NestedLogs((otlpwire.RecursionLimit-1)/2+1, false), otlpcodec.EncodingProto),
			codes.InvalidArgument, "too_deep", strconv.Itoa(otlpwire.RecursionLimit)},
		{"too costly to decode", Config{MaxBody: maxBody, InflightBytes: maxBody * (1 + otlpcodec.DecodeFactor)}, signal.Traces, costly,
			codes.ResourceExhausted, "too_costly", "--inflight-bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startGRPCServer(t, tt.cfg)
			cc := dialRaw(t, ts.grpcAddr)
			_, st := export(t, cc, tt.sig, tt.body)
			wantCode(t, st, tt.want)
			if d := retryDelay(st); d >= 0 {
				t.Errorf("RetryInfo %v present, want none", d)
			}
			if !strings.Contains(st.Message(), tt.wantMsg) {
				t.Errorf("message %q, want it to contain %q", st.Message(), tt.wantMsg)
			}
			stats := ts.Stats()
			if tt.want == codes.OK {
				if stats.Signals[tt.sig.String()].Records == 0 {
					t.Errorf("nothing stored, want the request's records")
				}
				return
			}
			if got := stats.Signals[tt.sig.String()].Records; got != 0 {
				t.Errorf("stored %d records, want 0", got)
			}
			if got := stats.Transports[TransportGRPC].Rejections[tt.reason]; got != 1 {
				t.Errorf("grpc rejections[%s] = %d, want 1", tt.reason, got)
			}
		})
	}
}

// TestGRPCConnLimits: an idle HTTP connection holds a connection slot that HTTP and gRPC
// share; a gRPC connection past the cap is refused (counted under grpc) and gets in once the
// HTTP one closes. MaxConns caps all connections, MaxConnsPerSource those of one address
// (all of the test's come from 127.0.0.1).
func TestGRPCConnLimits(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		rejection string
	}{
		{"shared MaxConns", Config{MaxConns: 1}, "conn_refused"},
		{"per source", Config{MaxConns: 8, MaxConnsPerSource: 1}, "conn_source_limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startGRPCServer(t, tt.cfg)
			release := holdIdleConn(t, ts.url)
			cc := dialRaw(t, ts.grpcAddr)
			body := encode(t, otlptest.Logs(3, 1), otlpcodec.EncodingProto)
			_, st := export(t, cc, signal.Logs, body, grpc.WaitForReady(false))
			wantCode(t, st, codes.Unavailable)
			if got := ts.Stats().Transports[TransportGRPC].Rejections[tt.rejection]; got == 0 {
				t.Errorf("grpc %s = 0, want > 0", tt.rejection)
			}
			release()
			polltest.Until(t, "a gRPC export once the HTTP connection closed", func() bool {
				_, st = export(t, cc, signal.Logs, body)
				return st.Code() == codes.OK
			})
		})
	}
}

// TestGRPCLatencyHistogram: gRPC answers are observed in the latency
// histogram under transport="grpc", labelled with the code's name.
func TestGRPCLatencyHistogram(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	cc := dialRaw(t, ts.grpcAddr)
	for i := range 3 {
		_, st := export(t, cc, signal.Logs, encode(t, otlptest.Logs(uint64(i), 2), otlpcodec.EncodingProto))
		wantCode(t, st, codes.OK)
	}
	_, st := export(t, cc, signal.Traces, []byte("\x0a\xff\xff\xff"))
	wantCode(t, st, codes.InvalidArgument)
	resp, err := send(nil, http.MethodGet, ts.url+"/metrics", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	const name = "otelbench_ingest_request_duration_seconds"
	for _, want := range []string{
		name + `_count{code="OK",signal="logs",transport="grpc"} 3`,
		name + `_bucket{code="OK",signal="logs",transport="grpc",le="+Inf"} 3`,
		name + `_count{code="INVALID_ARGUMENT",signal="traces",transport="grpc"} 1`,
		name + `_count{code="200",signal="logs",transport="http"} 0`,
	} {
		if !strings.Contains(string(resp.body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
