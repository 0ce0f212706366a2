package ingestsrv

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// grpcServer is a real server with OTLP/HTTP and OTLP/gRPC on loopback.
type grpcServer struct {
	*testServer
	grpcAddr string
}

func startGRPCServer(t testing.TB, cfg Config) *grpcServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		_ = srv.Close(context.Background())
		t.Fatal(err)
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		hln.Close()
		_ = srv.Close(context.Background())
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, url: "http://" + hln.Addr().String(), dir: cfg.DataDir, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- srv.ServeWithGRPC(ctx, hln, gln) }()
	t.Cleanup(func() { ts.stop(t) })
	return &grpcServer{testServer: ts, grpcAddr: gln.Addr().String()}
}

// dialRaw connects a gRPC client that sends and receives raw protobuf.
func dialRaw(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(otlpgrpc.Codec{})),
	}, opts...)
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// export calls sig's Export with body and returns the answer's bytes and
// status.
func export(t testing.TB, cc *grpc.ClientConn, sig signal.Signal, body []byte, opts ...grpc.CallOption) ([]byte, *status.Status) {
	t.Helper()
	return exportMD(t, cc, sig, body, nil, opts...)
}

// exportMD is export with metadata key-value pairs.
func exportMD(t testing.TB, cc *grpc.ClientConn, sig signal.Signal, body []byte, md []string, opts ...grpc.CallOption) ([]byte, *status.Status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	var reply otlpgrpc.Message
	err := cc.Invoke(ctx, otlpgrpc.Method(sig), otlpgrpc.Raw(body), &reply, opts...)
	defer reply.Free()
	return append([]byte(nil), reply.Bytes(nil)...), status.Convert(err)
}

// retryDelay returns the RetryInfo delay of st, or -1 without one.
func retryDelay(st *status.Status) time.Duration {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return -1
}

func wantCode(t testing.TB, st *status.Status, want codes.Code) {
	t.Helper()
	if st.Code() != want {
		t.Fatalf("code %v (%q), want %v", st.Code(), st.Message(), want)
	}
}
