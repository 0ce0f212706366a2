package ingestsrv

import (
	"context"
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
	ts, addr := startServerGRPC(t, cfg, true)
	return &grpcServer{testServer: ts, grpcAddr: addr}
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
