package ingestsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/tap"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// grpcState is the Server's OTLP/gRPC side: the listener it serves and
// the per-transport counters.
type grpcState struct {
	ln    net.Listener // nil: no gRPC
	stats counters     // what of Server.stats came over gRPC
	// inflight counts the Export calls being served; past maxRequests
	// more are refused.
	inflight atomic.Int64
}

// maxRequests is GRPCConfig.MaxRequests with its default (cfg is fixed
// once New returned).
func (s *Server) maxRequests() int64 {
	if s.cfg.GRPC.MaxRequests > 0 {
		return int64(s.cfg.GRPC.MaxRequests)
	}
	return DefaultGRPCMaxRequests
}

// ServeWithGRPC is Serve with a second listener, grpcLn, on which the server
// answers OTLP/gRPC (nil: none). Both transports share the admission, the
// budget, the store and the connection limit, and drain together.
func (s *Server) ServeWithGRPC(ctx context.Context, httpLn, grpcLn net.Listener) error {
	s.g.ln = grpcLn
	return s.Serve(ctx, httpLn)
}

// grpcRunner owns the gRPC server of one Serve.
type grpcRunner struct {
	srv  *grpc.Server
	errc chan error // Serve's result
}

// AckFunc is told of each OTLP/gRPC Export request the server answered OK,
// after its data was stored: msg is the request as received (protobuf,
// decompressed), valid only during the call.
type AckFunc func(sig signal.Signal, msg []byte)

// GRPCServer returns a gRPC server answering the OTLP services with the
// limits, admission and commit ListenAndServe's gRPC listener has, for a
// caller that serves it on a listener of its own (as Handler is for HTTP);
// onAck, if not nil, is called for each request answered OK. The caller
// stops it (GracefulStop) before Close.
func (s *Server) GRPCServer(onAck AckFunc) *grpc.Server {
	c := s.cfg.GRPC.withDefaults(s.cfg)
	gs := grpc.NewServer(
		grpc.ForceServerCodecV2(otlpgrpc.Codec{}),
		grpc.MaxRecvMsgSize(int(c.MaxRecv)), // at most MaxInt32 (validate)
		grpc.MaxConcurrentStreams(c.MaxStreams),
		grpc.InTapHandle(s.grpcTap),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: c.minPingInterval, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout, Time: grpcPingTime, Timeout: grpcPingTimeout}),
		// An idle connection gives its write buffer back: 1,024 idle
		// connections would otherwise pin 32 MiB.
		grpc.SharedWriteBuffer(true),
		grpc.ConnectionTimeout(readHeaderTimeout),
		grpc.NumStreamWorkers(grpcStreamWorkers),
	)
	for _, sig := range signal.All() {
		gs.RegisterService(otlpgrpc.ServiceDesc(sig, func(ctx context.Context, dec func(any) error) (any, error) {
			return s.grpcExport(ctx, sig, dec, onAck)
		}), nil)
	}
	return gs
}

// startGRPC builds the gRPC server and serves it on s.g.ln, if set, with
// connections counted against the limits of adm (the HTTP listener's). The HTTP
// listener answers gRPC too (route), so a client given the HTTP address
// (compare's load, say) reaches the same services.
func (s *Server) startGRPC(adm *admitListener) *grpcRunner {
	c := s.cfg.GRPC.withDefaults(s.cfg)
	gs := s.GRPCServer(nil)
	r := &grpcRunner{srv: gs, errc: make(chan error, 1)}
	if s.g.ln == nil {
		return r
	}
	// gRPC connections take the HTTP listener's slots and per-source counts
	// (Config.MaxConns and MaxConnsPerSource count both). Past a limit one
	// is closed at once (no rejecters: an HTTP/2 client cannot read the
	// HTTP/1.1 503 they write); gRPC clients see UNAVAILABLE and reconnect
	// with backoff.
	ln := newAdmitListener(s.g.ln, 1, 0, 0, func(_ rejectOutcome, perSource bool) {
		if perSource {
			s.rejectedGRPC(reasonConnSource)
			return
		}
		s.rejectedGRPC(reasonConnRefused)
	})
	ln.share(adm)
	go func() { r.errc <- gs.Serve(ln) }()
	s.log.Info("serving OTLP/gRPC", "addr", s.g.ln.Addr().String(), "max_recv", c.MaxRecv, "max_streams", c.MaxStreams)
	return r
}

// httpProtocols are the HTTP listener's: HTTP/1.1 for OTLP/HTTP, and
// HTTP/2 without TLS (prior knowledge, as gRPC clients speak it to an
// http:// endpoint) for route.
func httpProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// route sends gRPC requests reaching the HTTP listener to the gRPC server
// (grpc.Server.ServeHTTP, on net/http's HTTP/2 server) and the rest to
// next.
func (r *grpcRunner) route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.ProtoMajor == 2 && strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
			r.srv.ServeHTTP(w, req)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// failed returns the channel of the gRPC listener's Serve result (never
// ready without a gRPC listener).
func (r *grpcRunner) failed() <-chan error { return r.errc }

// stop drains the gRPC server: GOAWAY to every client, then wait up to
// timeout for the RPCs in flight (their group commits included) before
// cutting them off. It returns Serve's error if Serve failed.
func (r *grpcRunner) stop(timeout time.Duration) error {
	done := make(chan struct{})
	go func() { r.srv.GracefulStop(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case <-done:
	case <-t.C:
		err = errors.New("drain gRPC requests: timed out; the rest were cut off")
		r.srv.Stop()
		<-done
	}
	select {
	case e := <-r.errc:
		if e != nil && !errors.Is(e, grpc.ErrServerStopped) {
			err = errors.Join(err, fmt.Errorf("serve gRPC: %w", e))
		}
	default:
	}
	return err
}

// admittedKey marks the context of a stream that grpcTap let through.
type admittedKey struct{}

// grpcTap runs on the connection's reader before a stream gets a goroutine
// or reads its message: refusals that need no body (auth, draining, a spent
// budget) cost a header frame, not a 4 MiB read. gRPC calls it on its own
// listener only; grpcExport runs the same checks for requests that came
// through the HTTP listener.
func (s *Server) grpcTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if _, ok := otlpgrpc.SignalOf(info.FullMethodName); !ok {
		return ctx, nil // gRPC answers UNIMPLEMENTED
	}
	if err := s.grpcAdmit(info.Header); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, admittedKey{}, true), nil
}

// grpcAdmit checks what can be checked before reading a message: the
// token, draining, the budget and the projection lag.
func (s *Server) grpcAdmit(md metadata.MD) error {
	if s.cfg.AuthIngest && !s.auth.headerOK(first(md.Get("authorization"))) {
		return s.grpcReject(reasonUnauthorized, stUnauthenticated)
	}
	if s.draining.Load() {
		return s.grpcReject(reasonShuttingDown, stShuttingDown)
	}
	if s.g.inflight.Load() >= s.maxRequests() {
		return s.grpcReject(reasonQueueFull, stTooMany)
	}
	if s.budget.used.Load() >= s.budget.max {
		return s.grpcReject(reasonQueueFull, stOverloaded)
	}
	if s.cfg.MaxLagRecords > 0 && s.store.Stats().LagRecords > s.cfg.MaxLagRecords {
		return s.grpcReject(reasonQueueFull, stLagging)
	}
	return nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
