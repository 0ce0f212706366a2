package ingestsrv

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
	_ "unsafe" // go:linkname

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// clientMinPingTime is grpc-go's floor on a client's keepalive interval
// (10 s outside tests); grpc-go's own keepalive enforcement tests lower it
// the same way so that an abusive client is a real grpc-go client.
//
//go:linkname clientMinPingTime google.golang.org/grpc/internal.KeepaliveMinPingTime
var clientMinPingTime time.Duration

// goAwayWatch is a client connection that reads a copy of what the server
// sends through an HTTP/2 framer and records the first GOAWAY.
type goAwayWatch struct {
	net.Conn
	pw *io.PipeWriter

	mu     sync.Mutex
	code   http2.ErrCode
	debug  string
	goAway bool
}

func (w *goAwayWatch) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if n > 0 {
		_, _ = w.pw.Write(p[:n]) // the framer goroutine stops reading after GOAWAY: then this fails, harmlessly
	}
	return n, err
}

func (w *goAwayWatch) Close() error {
	w.pw.Close()
	return w.Conn.Close()
}

// watch reads the server's frames until a GOAWAY or the end of the copy.
func (w *goAwayWatch) watch(pr *io.PipeReader) {
	defer pr.Close()
	fr := http2.NewFramer(nil, pr)
	fr.SetMaxReadFrameSize(1 << 24)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			w.mu.Lock()
			w.goAway, w.code, w.debug = true, ga.ErrCode, string(ga.DebugData())
			w.mu.Unlock()
			return
		}
	}
}

func (w *goAwayWatch) result() (bool, http2.ErrCode, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.goAway, w.code, w.debug
}

// TestGRPCKeepaliveEnforcement: a grpc-go client pinging more often than
// the enforcement policy permits gets GOAWAY ENHANCE_YOUR_CALM
// "too_many_pings" and loses its connection; one pinging at a permitted
// interval without any RPC in flight (PermitWithoutStream) keeps it.
func TestGRPCKeepaliveEnforcement(t *testing.T) {
	const minPing = 200 * time.Millisecond
	saved := clientMinPingTime
	clientMinPingTime = time.Millisecond
	t.Cleanup(func() { clientMinPingTime = saved })
	tests := []struct {
		name       string
		every      time.Duration
		wantGoAway bool
	}{
		{"abusive", 20 * time.Millisecond, true},
		{"permitted, no stream", 2 * minPing, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{}
			cfg.GRPC.minPingInterval = minPing
			ts := startGRPCServer(t, cfg)
			var watches []*goAwayWatch
			var mu sync.Mutex
			dial := func(ctx context.Context, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil {
					return nil, err
				}
				pr, pw := io.Pipe()
				w := &goAwayWatch{Conn: c, pw: pw}
				go w.watch(pr) // owned: ends when the connection closes or a GOAWAY came
				mu.Lock()
				watches = append(watches, w)
				mu.Unlock()
				return w, nil
			}
			cc := dialRaw(t, ts.grpcAddr, grpc.WithContextDialer(dial),
				grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: tt.every, Timeout: 5 * time.Second, PermitWithoutStream: true}))
			cc.Connect()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			waitState(ctx, t, cc, connectivity.Ready)
			// 2 s: the abusive client's third strike comes after ~80 ms; the
			// permitted one pings 5 times.
			left := waitLeave(cc, connectivity.Ready, 2*time.Second)
			mu.Lock()
			first := watches[0]
			mu.Unlock()
			got, code, debug := first.result()
			if tt.wantGoAway {
				if !got || code != http2.ErrCodeEnhanceYourCalm || debug != "too_many_pings" || !left {
					t.Errorf("got GOAWAY %v code %v debug %q, left READY %v; want GOAWAY ENHANCE_YOUR_CALM too_many_pings, connection lost", got, code, debug, left)
				}
				return
			}
			if got || left {
				t.Errorf("got GOAWAY %v code %v debug %q, left READY %v; want none, still READY", got, code, debug, left)
			}
		})
	}
}

// waitState waits for cc to reach want.
func waitState(ctx context.Context, t *testing.T, cc *grpc.ClientConn, want connectivity.State) {
	t.Helper()
	for s := cc.GetState(); s != want; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			t.Fatalf("connection state %v, want %v", s, want)
		}
	}
}

// waitLeave reports whether cc leaves state from within d.
func waitLeave(cc *grpc.ClientConn, from connectivity.State, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return cc.WaitForStateChange(ctx, from)
}

// TestGRPCMaxStreams: with GRPCConfig.MaxStreams (--grpc-max-streams) at
// 3, a grpc-go client's fourth concurrent stream on one connection waits
// for a slot (the server's SETTINGS_MAX_CONCURRENT_STREAMS) and gets one
// once a stream ends.
func TestGRPCMaxStreams(t *testing.T) {
	const maxStreams = 3
	cfg := Config{}
	cfg.GRPC.MaxStreams = maxStreams
	ts := startGRPCServer(t, cfg)
	cc := dialRaw(t, ts.grpcAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cc.Connect()
	waitState(ctx, t, cc, connectivity.Ready)
	// Streams of the unary Export method whose message is not sent yet:
	// each holds a slot until it is finished.
	desc := &grpc.StreamDesc{StreamName: "Export", ClientStreams: true, ServerStreams: true}
	method := otlpgrpc.Method(signal.Logs)
	var open []grpc.ClientStream
	for i := range maxStreams {
		cs, err := cc.NewStream(ctx, desc, method)
		if err != nil {
			t.Fatalf("stream %d: %v, want open", i, err)
		}
		open = append(open, cs)
	}
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err := cc.NewStream(short, desc, method)
	cancelShort()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("stream %d: got %v, want it to wait for a slot until its deadline", maxStreams, err)
	}
	// Finish one stream with a real request: its slot frees the next.
	body := encode(t, otlptest.Logs(0, 3), otlpcodec.EncodingProto)
	if err := open[0].SendMsg(otlpgrpc.Raw(body)); err != nil {
		t.Fatalf("send: %v", err)
	}
	if err := open[0].CloseSend(); err != nil {
		t.Fatalf("close send: %v", err)
	}
	var reply otlpgrpc.Message
	if err := open[0].RecvMsg(&reply); err != nil {
		t.Fatalf("export: got %v, want OK", err)
	}
	reply.Free()
	next, cancelNext := context.WithTimeout(ctx, 10*time.Second)
	defer cancelNext()
	if _, err := cc.NewStream(next, desc, method); err != nil {
		t.Errorf("stream after one ended: got %v, want open", err)
	}
	if got := ts.Stats().Signals[signal.Logs.String()].Records; got != 3 {
		t.Errorf("stored %d records, want 3", got)
	}
}
