package query

import (
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

// testEnv is a real store in a temp dir with the API served on loopback.
type testEnv struct {
	st   *store.Store
	api  *API
	base string // http://127.0.0.1:port
}

func newEnv(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	return newEnvListener(t, cfg, nil)
}

// smallSendBuffers makes every accepted connection's kernel send buffer
// tiny, so a client that stops reading blocks the server's writes after a
// few kilobytes instead of megabytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// smallRecvDialer dials with a 4 KiB kernel receive buffer, set before the handshake so the
// window the client advertises is small from the start: a client that stops reading stalls the
// server's writes after a few kilobytes.
func smallRecvDialer() *net.Dialer {
	return &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = setRecvBuffer(fd, 4096) })
		return errors.Join(err, serr)
	}}
}

func newEnvListener(t *testing.T, cfg Config, wrap func(net.Listener) net.Listener) *testEnv {
	t.Helper()
	return newEnvStore(t, querytest.OpenStore(t), cfg, wrap)
}

// newEnvStore serves the API over st.
func newEnvStore(t *testing.T, st *store.Store, cfg Config, wrap func(net.Listener) net.Listener) *testEnv {
	t.Helper()
	cfg.Tail.Notify = st.ProjectedNotify
	api := New(NewReader(st.ReadDB()), cfg)
	mux := http.NewServeMux()
	api.MountOn(mux.Handle)
	return &testEnv{st: st, api: api, base: querytest.Serve(t, mux, wrap, api.Run)}
}

type logSpec = querytest.LogSpec
type spanSpec = querytest.SpanSpec

func (e *testEnv) appendLogs(t *testing.T, logs ...logSpec) { querytest.AppendLogs(t, e.st, logs...) }
func (e *testEnv) appendSpans(t *testing.T, spans ...spanSpec) {
	querytest.AppendSpans(t, e.st, spans...)
}
func (e *testEnv) appendMetrics(t *testing.T, md pmetric.Metrics) {
	querytest.AppendMetrics(t, e.st, md)
}
func (e *testEnv) waitProjected(t *testing.T) { querytest.WaitProjected(t, e.st) }
