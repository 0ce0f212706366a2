package dashboard

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/query"
	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a real store with the API and the dashboard served on loopback.
type env struct {
	st   *store.Store
	base string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := querytest.OpenStore(t)
	api := query.New(query.NewReader(st.ReadDB()), query.Config{Tail: query.TailConfig{Notify: st.ProjectedNotify}})
	d, err := New(api.Reader(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.MountOn(mux.Handle)
	d.MountOn(mux.Handle)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	served, ran := make(chan error, 1), make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	go func() { ran <- api.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("api.Run: %v", err)
		}
		_ = hs.Close() // also ends open SSE streams
		<-served
	})
	return &env{st: st, base: "http://" + ln.Addr().String()}
}
