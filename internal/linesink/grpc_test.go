package linesink

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/otlpgrpc/otlpgrpctest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// serveGRPC serves gs on loopback until the test ends and returns a client
// connection to it.
func serveGRPC(t *testing.T, gs *grpc.Server) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(otlpgrpctest.Serve(t, gs), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// export sends one raw Export request of sig, compressed with comp ("" for
// none), and returns the call's error.
func export(conn *grpc.ClientConn, sig signal.Signal, comp string, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := []grpc.CallOption{grpc.ForceCodecV2(otlpgrpc.Codec{})}
	if comp != "" {
		opts = append(opts, grpc.UseCompressor(comp))
	}
	var resp otlpgrpc.Message
	defer resp.Free()
	return conn.Invoke(ctx, otlpgrpc.Method(sig), otlpgrpc.Raw(body), &resp, opts...)
}

// TestGRPC sends the script over OTLP/gRPC with a real gRPC client, to the
// accounting-only receiver and to the ingest server's gRPC serving with
// AckGRPC, and expects the same exact counts as over HTTP.
func TestGRPC(t *testing.T) {
	tests := []struct {
		name  string
		comp  string
		serve bool
	}{
		{"count", "", false},
		{"count gzip", otlpgrpc.CompressorGzip, false},
		{"count zstd", otlpgrpc.CompressorZstd, false},
		{"serve", "", true},
		{"serve gzip", otlpgrpc.CompressorGzip, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccounting()
			var srv *ingestsrv.Server
			var gs *grpc.Server
			if tt.serve {
				var err error
				srv, err = ingestsrv.New(context.Background(), ingestsrv.Config{Config: store.Config{Dir: t.TempDir()}, Addr: "127.0.0.1:0"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := srv.Close(context.Background()); err != nil {
						t.Errorf("close: %v", err)
					}
				})
				gs = srv.GRPCServer(a.AckGRPC)
			} else {
				gs = a.GRPCServer()
			}
			conn := serveGRPC(t, gs)
			sendScriptWith(t, otlpcodec.EncodingProto, func(b []byte) error { return export(conn, signal.Logs, tt.comp, b) })
			err := export(conn, signal.Logs, tt.comp, []byte("\xff\xff\xff"))
			if got := status.Code(err); got != codes.InvalidArgument {
				t.Errorf("corrupt message: got %v, want InvalidArgument", err)
			}
			if err := export(conn, signal.Traces, tt.comp, nil); err != nil {
				t.Errorf("traces export: got %v, want OK", err)
			}
			checkScript(t, a)
			if srv != nil {
				if n := srv.Store().Stats().Logs.Records; n != 11 {
					t.Errorf("store holds %d records, want the 11 acknowledged", n)
				}
			}
		})
	}
}
