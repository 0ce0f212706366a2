package main

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/otlpgrpc/otlpgrpctest"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestLoadProtocol checks what --protocol and OTEL_EXPORTER_OTLP_PROTOCOL make of the
// config, the flag winning over the variable.
func TestLoadProtocol(t *testing.T) {
	tests := []struct {
		name         string
		env          string
		args         []string
		wantProtocol loadgen.Protocol
	}{
		{"default", "", nil, ""},
		{"grpc flag", "", []string{"--protocol", "grpc"}, loadgen.ProtocolGRPC},
		{"grpc endpoint", "", []string{"--protocol", "grpc", "--endpoint", "10.0.0.1:4317"}, loadgen.ProtocolGRPC},
		{"grpc env", "grpc", nil, loadgen.ProtocolGRPC},
		{"flag over env", "grpc", []string{"--protocol", "http/protobuf"}, loadgen.ProtocolHTTPProtobuf},
		{"http/json", "", []string{"--protocol", "http/json"}, loadgen.ProtocolHTTPJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.env)
			var f loadFlags
			fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
			f.bind(fs, true)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config(io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Protocol != tt.wantProtocol {
				t.Errorf("got protocol %q, want %q", cfg.Protocol, tt.wantProtocol)
			}
		})
	}
	usage := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"unknown", nil, []string{"--protocol", "thrift"}},
		{"grpc with per-signal endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, []string{"--protocol", "grpc"}},
		{"connections over http", nil, []string{"--connections", "2"}},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			wantRun(t, append([]string{"load", "--requests", "1"}, tt.args...), exitcode.Usage)
		})
	}
}

// startStatusServer serves the three OTLP Export RPCs on loopback and answers every other call
// with st (the others OK), over the raw codec as a real server would.
func startStatusServer(t *testing.T, st *status.Status) string {
	t.Helper()
	var calls atomic.Int64
	return otlpgrpctest.ExportServer(t, func(signal.Signal) (any, error) {
		if calls.Add(1)%2 == 0 {
			return nil, st.Err()
		}
		return otlpgrpc.Raw(nil), nil
	})
}

// TestLoadGRPCExitCodes: gRPC codes fail a run like their HTTP equivalents. The codes the OTLP
// specification retries (UNAVAILABLE, RESOURCE_EXHAUSTED with RetryInfo) fail it by
// --min-success unless --retry gets them through; the others fail it outright, named by code.
func TestLoadGRPCExitCodes(t *testing.T) {
	retryInfo := func(c codes.Code) *status.Status {
		st, err := status.New(c, "shed").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tests := []struct {
		name string
		st   *status.Status
		args []string
		code int
		want []string
	}{
		{"unavailable", retryInfo(codes.Unavailable), nil, 1, []string{"gRPC UNAVAILABLE", "fewer than --min-success"}},
		{"unavailable, retried", retryInfo(codes.Unavailable), []string{"--retry", "3"}, 0, []string{"100.00% of requests succeeded"}},
		{"throttled, retried", retryInfo(codes.ResourceExhausted), []string{"--retry", "3"}, 0, []string{"100.00% of requests succeeded"}},
		{"too large", status.New(codes.ResourceExhausted, "over the limit"), []string{"--retry", "3"}, 1,
			[]string{"gRPC RESOURCE_EXHAUSTED: over the limit", "retrying cannot fix", "fewer --records"}},
		{"invalid", status.New(codes.InvalidArgument, "bad"), []string{"--retry", "3"}, 1, []string{"gRPC INVALID_ARGUMENT: bad", "retrying cannot fix"}},
		{"unauthenticated", status.New(codes.Unauthenticated, "no token"), nil, 1, []string{"gRPC UNAUTHENTICATED", "--header Authorization"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := startStatusServer(t, tt.st)
			args := append([]string{"load", "--protocol", "grpc", "--insecure", "--endpoint", addr,
				"--requests", "12", "--records", "2", "--concurrency", "1", "--no-progress"}, tt.args...)
			wantRun(t, args, tt.code, tt.want...)
		})
	}
	t.Run("TLS to a plain server", func(t *testing.T) {
		addr := startStatusServer(t, status.New(codes.OK, ""))
		// The cause, --insecure as the fix, and a report header that names grpc.
		wantRun(t, []string{"load", "--protocol", "grpc", "--endpoint", addr, "--requests", "2", "--concurrency", "1", "--timeout", "2s", "--no-progress"}, 1,
			"TLS to a plain-HTTP server", "--insecure", "records/request, grpc proto")
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		wantRun(t, []string{"load", "--protocol", "grpc", "--insecure", "--endpoint", addr, "--requests", "2", "--concurrency", "1", "--timeout", "2s", "--no-progress"}, 1,
			"connection refused")
	})
}
