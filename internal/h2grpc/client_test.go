package h2grpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/otlpgrpc/otlpgrpctest"
)

// The test service: /test.Echo/Echo answers what handler returns.
const (
	echoService = "test.Echo"
	echoPath    = "/test.Echo/Echo"
)

type handler func(ctx context.Context, body []byte) ([]byte, error)

// echo answers the request's body.
func echo(_ context.Context, body []byte) ([]byte, error) { return body, nil }

// startServer serves h with grpc-go on loopback and returns its address
// and the server (stopped at cleanup).
func startServer(t testing.TB, h handler, opts ...grpc.ServerOption) (string, *grpc.Server) {
	t.Helper()
	gs := grpc.NewServer(append(opts, grpc.ForceServerCodecV2(otlpgrpc.Codec{}))...)
	gs.RegisterService(&grpc.ServiceDesc{
		ServiceName: echoService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var m otlpgrpc.Message
			if err := dec(&m); err != nil {
				return nil, err
			}
			body := bytes.Clone(m.Bytes(nil))
			m.Free()
			out, err := h(ctx, body)
			if err != nil {
				return nil, err
			}
			return otlpgrpc.Raw(out), nil
		}}},
	}, nil)
	return otlpgrpctest.Serve(t, gs), gs
}

func newClient(t testing.TB, addr, compressor string, md ...[2]string) *Client {
	t.Helper()
	c, err := NewClient(Config{Addr: addr, Compressor: compressor, UserAgent: "h2grpc-test",
		Methods: []Method{{Path: echoPath, Metadata: md}}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func timeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestEcho sends bodies from empty to well over the 64 KiB initial
// windows, plain and compressed, and gets each back whole.
func TestEcho(t *testing.T) {
	addr, _ := startServer(t, echo)
	for _, comp := range []string{"", "gzip", "zstd", "snappy"} {
		for _, size := range []int{0, 1, 5000, 100 << 10, 1<<20 + 3} {
			t.Run(fmt.Sprintf("%s/%d", comp, size), func(t *testing.T) {
				c := newClient(t, addr, comp)
				call := c.NewCall()
				body := bytes.Repeat([]byte("otlp"), size/4+1)[:size]
				for i := range 3 { // the Call and its buffers are reused
					if err := call.Invoke(timeout(t, 10*time.Second), 0, body); err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					if call.Code() != codes.OK || !bytes.Equal(call.Reply(), body) {
						t.Fatalf("call %d: got %v and %d bytes, want OK and the %d sent", i, call.Code(), len(call.Reply()), size)
					}
				}
			})
		}
	}
}

// TestStatus checks that codes, messages and RetryInfo details come
// through as the server sent them, and metadata reaches the server.
func TestStatus(t *testing.T) {
	tests := []struct {
		name    string
		code    codes.Code
		msg     string
		retry   time.Duration
		wantMsg string
	}{
		{"unavailable with retry info", codes.Unavailable, "busy", 1500 * time.Millisecond, "busy"},
		{"invalid argument", codes.InvalidArgument, "bad: 100% (\"x\")\n", 0, "bad: 100% (\"x\")\n"},
		{"unauthenticated", codes.Unauthenticated, "no token", 0, "no token"},
		{"resource exhausted", codes.ResourceExhausted, "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _ := startServer(t, func(ctx context.Context, _ []byte) ([]byte, error) {
				md, _ := metadata.FromIncomingContext(ctx)
				if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer t" {
					return nil, status.Errorf(codes.Internal, "authorization %q, want Bearer t", got)
				}
				st := status.New(tt.code, tt.msg)
				if tt.retry > 0 {
					st, _ = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(tt.retry)})
				}
				return nil, st.Err()
			})
			call := newClient(t, addr, "", [2]string{"authorization", "Bearer t"}).NewCall()
			if err := call.Invoke(timeout(t, 5*time.Second), 0, []byte("x")); err != nil {
				t.Fatal(err)
			}
			st := call.Status()
			if call.Code() != tt.code || st.Code() != tt.code || st.Message() != tt.wantMsg {
				t.Fatalf("got %v %v %q, want %v %q", call.Code(), st.Code(), st.Message(), tt.code, tt.wantMsg)
			}
			var got time.Duration
			for _, d := range st.Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok {
					got = ri.GetRetryDelay().AsDuration()
				}
			}
			if got != tt.retry {
				t.Errorf("RetryInfo delay %v, want %v", got, tt.retry)
			}
		})
	}
}

// TestSizeLimit sends a message over the server's receive limit:
// RESOURCE_EXHAUSTED, and the connection still serves the next call.
func TestSizeLimit(t *testing.T) {
	addr, _ := startServer(t, echo, grpc.MaxRecvMsgSize(64<<10))
	call := newClient(t, addr, "").NewCall()
	for _, tc := range []struct {
		size int
		want codes.Code
	}{{200 << 10, codes.ResourceExhausted}, {10, codes.OK}, {1 << 20, codes.ResourceExhausted}, {60 << 10, codes.OK}} {
		if err := call.Invoke(timeout(t, 5*time.Second), 0, make([]byte, tc.size)); err != nil {
			t.Fatalf("%d bytes: %v", tc.size, err)
		}
		if call.Code() != tc.want {
			t.Errorf("%d bytes: got %v, want %v", tc.size, call.Code(), tc.want)
		}
	}
}

// TestMaxConcurrentStreams runs more callers than the server takes
// streams: none is refused, and the server never sees more at once.
func TestMaxConcurrentStreams(t *testing.T) {
	const limit, callers, calls = 3, 16, 30
	var inFlight, peak atomic.Int64
	addr, _ := startServer(t, func(_ context.Context, b []byte) ([]byte, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		return b, nil
	}, grpc.MaxConcurrentStreams(limit))
	c := newClient(t, addr, "")
	errs := runCallers(t, c, callers, calls, nil)
	if len(errs) != 0 {
		t.Fatalf("%d calls failed, first: %v", len(errs), errs[0])
	}
	if p := peak.Load(); p > limit || p < 2 {
		t.Errorf("server saw at most %d calls at once, want 2..%d", p, limit)
	}
}

// runCallers runs callers goroutines making calls calls each (each
// checking its echo), stopping early when stop is closed, and returns the
// errors.
func runCallers(t testing.TB, c *Client, callers, calls int, ok *atomic.Int64) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() {
			call := c.NewCall()
			body := bytes.Repeat([]byte{byte(w)}, 1000+w*7000) // some above a 64 KiB window together
			for range calls {
				err := call.Invoke(timeout(t, 10*time.Second), 0, body)
				if err == nil && (call.Code() != codes.OK || !bytes.Equal(call.Reply(), body)) {
					err = fmt.Errorf("got %v, %d bytes; want OK, %d", call.Code(), len(call.Reply()), len(body))
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				} else if ok != nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// TestGracefulStop stops the server (GOAWAY) while calls are in flight:
// every call either succeeds or fails without an answer, none hangs, and
// the calls that succeeded are exactly those the server answered.
func TestGracefulStop(t *testing.T) {
	var served atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	addr, gs := startServer(t, func(_ context.Context, b []byte) ([]byte, error) {
		once.Do(func() { close(started) })
		time.Sleep(2 * time.Millisecond)
		served.Add(1)
		return b, nil
	})
	c := newClient(t, addr, "")
	go func() {
		<-started
		time.Sleep(50 * time.Millisecond)
		gs.GracefulStop()
	}()
	var ok atomic.Int64
	errs := runCallers(t, c, 8, 200, &ok)
	for _, err := range errs {
		if !errors.Is(err, ErrNoAnswer) {
			t.Fatalf("call failed with %v, want ErrNoAnswer or success", err)
		}
	}
	if len(errs) == 0 {
		t.Fatal("no call failed: the server stopped after every call, want it to stop mid-load")
	}
	if ok.Load() != served.Load() {
		t.Errorf("%d calls OK, server answered %d: want equal", ok.Load(), served.Load())
	}
}

// TestDeadlineNoAnswer: a server that never answers holds a call no
// longer than its context.
func TestDeadlineNoAnswer(t *testing.T) {
	addr, _ := startServer(t, func(ctx context.Context, b []byte) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	call := newClient(t, addr, "").NewCall()
	for range 3 {
		start := time.Now()
		err := call.Invoke(timeout(t, 100*time.Millisecond), 0, []byte("x"))
		if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "deadline") {
			t.Fatalf("got %v, want ErrNoAnswer after the deadline", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("call returned after %v, want about 100ms", d)
		}
	}
}

// TestRefused: nobody listens.
func TestRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	call := newClient(t, addr, "").NewCall()
	if err := call.Invoke(timeout(t, 5*time.Second), 0, nil); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("got %v, want ErrNoAnswer", err)
	}
}

// TestCloseInFlight closes the client while calls wait for a server that
// does not answer: each ends without an answer.
func TestCloseInFlight(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	addr, _ := startServer(t, func(ctx context.Context, b []byte) ([]byte, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return b, nil
	})
	c := newClient(t, addr, "")
	errc := make(chan error, 4)
	for range 4 {
		go func() { errc <- c.NewCall().Invoke(timeout(t, 30*time.Second), 0, []byte("x")) }()
	}
	time.Sleep(100 * time.Millisecond)
	_ = c.Close()
	for range 4 {
		if err := <-errc; !errors.Is(err, ErrNoAnswer) {
			t.Errorf("got %v, want ErrNoAnswer", err)
		}
	}
	if err := c.NewCall().Invoke(timeout(t, time.Second), 0, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

// BenchmarkInvoke makes unary calls of 30 KB (about load's 100-record log
// requests) to a raw HTTP/2 peer on loopback that answers a precomputed
// OK with an empty message, so that the allocations reported are nearly
// all the client's (the peer's framer allocates its HEADERS frames).
func BenchmarkInvoke(b *testing.B) {
	tmpl := frames(1, []byte{0, 0, 0, 0, 0}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
	answer := make([]byte, len(tmpl))
	addr := rawServer(b, func(id uint32) []byte {
		copy(answer, tmpl)
		for off := 0; off+9 <= len(answer); off += 9 + (int(answer[off])<<16 | int(answer[off+1])<<8 | int(answer[off+2])) {
			answer[off+5], answer[off+6], answer[off+7], answer[off+8] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
		}
		return answer
	})
	call := newClient(b, addr, "").NewCall()
	body := bytes.Repeat([]byte("otlp"), 30<<10/4)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := call.Invoke(ctx, 0, body); err != nil || call.Code() != codes.OK {
			b.Fatalf("got %v, %v", call.Code(), err)
		}
	}
}
