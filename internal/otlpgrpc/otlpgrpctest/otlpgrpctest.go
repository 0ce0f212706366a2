// Package otlpgrpctest runs grpc-go servers on loopback for the tests of the gRPC clients (load's
// senders, the lean HTTP/2 client, the load command's exit codes).
package otlpgrpctest

import (
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"
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
