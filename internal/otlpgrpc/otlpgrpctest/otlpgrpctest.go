// Package otlpgrpctest runs grpc-go servers on loopback for tests: servers of planned OTLP answers
// for the gRPC clients (load's senders, the load command's exit codes), and any grpc.Server a
// test builds (the lean HTTP/2 client's echo service, the line sink's receivers).
package otlpgrpctest

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// Serve serves gs on a new 127.0.0.1 listener until the test ends, and returns its address. It
// fails the test if Serve returns an error other than the one for a stopped server.
func Serve(t testing.TB, gs *grpc.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- gs.Serve(ln) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("grpc test server: %v", err)
		}
	})
	return ln.Addr().String()
}

// ExportServer serves the three OTLP Export RPCs (raw codec) with grpc-go on loopback until the
// test ends, and returns its address. Each request is read and dropped; answer(sig) gives the
// response, a *otlpgrpc.Message, or a status error. It is called from many goroutines at once.
func ExportServer(t testing.TB, answer func(sig signal.Signal) (any, error)) string {
	t.Helper()
	gs := grpc.NewServer(grpc.ForceServerCodecV2(otlpgrpc.Codec{}))
	for _, sig := range signal.All() {
		gs.RegisterService(otlpgrpc.ServiceDesc(sig, func(_ context.Context, dec func(any) error) (any, error) {
			var m otlpgrpc.Message
			if err := dec(&m); err != nil {
				return nil, err
			}
			m.Free()
			return answer(sig)
		}), nil)
	}
	return Serve(t, gs)
}
