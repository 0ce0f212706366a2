package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/store"
)

// sink is the running receiver: an OTLP/HTTP and an OTLP/gRPC server on
// loopback in front of the accounting, and in serve mode the ingest
// server's handler, gRPC serving and store.
type sink struct {
	acc          *linesink.Accounting
	endpoint     string // http://host:port
	host         string
	port         string
	grpcEndpoint string // host:port
	hs           *http.Server
	gs           *grpc.Server
	ingest       *ingestsrv.Server // nil in count mode
	served       chan error        // the HTTP server's Serve result
	grpcServed   chan error        // the gRPC server's

	closeOnce sync.Once
	closeErr  error
}

// startSink listens on addr (OTLP/HTTP) and grpcAddr (OTLP/gRPC) and
// serves the sink of mode; serve mode keeps its database under work.
func startSink(ctx context.Context, mode SinkMode, addr, grpcAddr, work string, log *slog.Logger) (*sink, error) {
	s := &sink{acc: linesink.NewAccounting(), served: make(chan error, 1), grpcServed: make(chan error, 1)}
	h := s.acc.Handler()
	if mode == SinkServe {
		srv, err := ingestsrv.New(ctx, ingestsrv.Config{Config: store.Config{Dir: filepath.Join(work, "serve"), Logger: log}, Addr: addr})
		if err != nil {
			return nil, fmt.Errorf("start serve sink: %w", err)
		}
		s.ingest = srv
		h = s.acc.Tap(srv.Handler(), ingestsrv.DefaultMaxBody)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.closeIngest()
		return nil, fmt.Errorf("sink listen: %w", err)
	}
	gln, err := net.Listen("tcp", grpcAddr)
	if err != nil {
		ln.Close()
		s.closeIngest()
		return nil, fmt.Errorf("sink gRPC listen: %w", err)
	}
	s.endpoint = "http://" + ln.Addr().String()
	s.host, s.port, _ = net.SplitHostPort(ln.Addr().String())
	s.grpcEndpoint = gln.Addr().String()
	s.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if s.ingest != nil {
		s.gs = s.ingest.GRPCServer(s.acc.AckGRPC)
	} else {
		s.gs = s.acc.GRPCServer()
	}
	go func() { s.served <- s.hs.Serve(ln) }()      // owned: ends with close
	go func() { s.grpcServed <- s.gs.Serve(gln) }() // owned: ends with close
	return s, nil
}

// close stops accepting, lets requests in flight finish, and closes the
// store in serve mode. Later calls return the first call's error.
func (s *sink) close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *sink) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := errors.Join(s.hs.Shutdown(ctx), stopGRPC(ctx, s.gs))
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("sink serve: %w", serr))
	}
	if serr := <-s.grpcServed; serr != nil {
		err = errors.Join(err, fmt.Errorf("sink serve gRPC: %w", serr))
	}
	return errors.Join(err, s.closeIngest())
}

// stopGRPC lets the RPCs in flight finish until ctx ends, then cuts them
// off.
func stopGRPC(ctx context.Context, gs *grpc.Server) error {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }() // owned: ends by GracefulStop or Stop below
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		gs.Stop()
		<-done
		return fmt.Errorf("drain gRPC requests: %w", ctx.Err())
	}
}

func (s *sink) closeIngest() error {
	if s.ingest == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.ingest.Close(ctx); err != nil {
		return fmt.Errorf("close serve sink: %w", err)
	}
	return nil
}
