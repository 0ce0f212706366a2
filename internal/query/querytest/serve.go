package querytest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// Serve serves h (a mux with the query API mounted) on a new 127.0.0.1 listener, wrapped by wrap
// unless it is nil, and runs run (the API's Run, which feeds the live tail) until the test ends;
// it returns the base URL. At the end it stops run first, then closes the server, which also ends
// open SSE streams.
func Serve(t testing.TB, h http.Handler, wrap func(net.Listener) net.Listener, run func(context.Context) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		ln = wrap(ln)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	served, ran := make(chan error, 1), make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	go func() { ran <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("api.Run: %v", err)
		}
		_ = hs.Close()
		<-served
	})
	return "http://" + ln.Addr().String()
}
