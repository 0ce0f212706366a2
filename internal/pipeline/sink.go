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

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/linesink"
)

// sink is the running receiver: an HTTP server on loopback in front of the
// accounting, and in serve mode the ingest server's handler and store.
type sink struct {
	acc      *linesink.Accounting
	endpoint string // http://host:port
	host     string
	port     string
	hs       *http.Server
	ingest   *ingestsrv.Server // nil in count mode
	served   chan error

	closeOnce sync.Once
	closeErr  error
}

// startSink listens on addr and serves the sink of mode; serve mode keeps
// its database under work.
func startSink(ctx context.Context, mode SinkMode, addr, work string, log *slog.Logger) (*sink, error) {
	s := &sink{acc: linesink.NewAccounting(), served: make(chan error, 1)}
	h := s.acc.Handler()
	if mode == SinkServe {
		srv, err := ingestsrv.New(ctx, ingestsrv.Config{Addr: addr, DataDir: filepath.Join(work, "serve"), Logger: log})
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
	s.endpoint = "http://" + ln.Addr().String()
	s.host, s.port, _ = net.SplitHostPort(ln.Addr().String())
	s.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { s.served <- s.hs.Serve(ln) }() // owned: ends with close
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
	err := s.hs.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("sink serve: %w", serr))
	}
	return errors.Join(err, s.closeIngest())
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
