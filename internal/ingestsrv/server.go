package ingestsrv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// HTTP server limits. Bodies are bounded by Config.MaxBody; these bound the
// rest: slow headers (slowloris), header size, and idle keep-alives.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second  // whole request, body included
	writeTimeout      = 120 * time.Second // covers the wait for the group commit
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Server is the OTLP/HTTP ingest server. Create it with New, add routes with
// Mount, then run Serve or ListenAndServe once.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *store.Store
	mux     *http.ServeMux
	budget  budget
	bodies  sync.Pool // *[]byte request body buffers (ingest.go)
	rates   sync.Pool // *rateReader (bodyrate.go)
	stats   counters
	latency *ingestLatency
	auth    *bearer // nil: no auth
	g       grpcState

	draining atomic.Bool // set when shutdown begins: new requests get 503
	admit    atomic.Pointer[admitListener]
	served   atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// New validates cfg, opens the store in cfg.Dir and registers the
// routes. The caller must run Serve (which closes the store at the end) or
// call Close.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	st, err := store.Open(ctx, cfg.Config)
	if err != nil {
		cause := ""
		if pe := (*fs.PathError)(nil); !errors.As(err, &pe) { // SQLite's error: the OS reason is lost
			cause = probeDir(cfg.Dir)
		}
		return nil, fmt.Errorf("open store in %s: %w%s", cfg.Dir, err, cause)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		store:   st,
		mux:     http.NewServeMux(),
		budget:  budget{max: cfg.InflightBytes},
		latency: newIngestLatency(),
	}
	if cfg.AuthToken != "" {
		s.auth = newBearer(cfg.AuthToken)
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	for _, sig := range signal.All() {
		var h http.Handler = s.ingestHandler(sig)
		if s.cfg.AuthIngest {
			h = s.requireAuth(h, authOTLP)
		}
		s.mux.Handle(sig.Path(), h)
	}
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	s.mux.Handle("GET /api/v1/stats", s.requireAuth(http.HandlerFunc(s.handleStats), authBrowser))
	s.mux.Handle("GET /metrics", s.requireAuth(s.metricsHandler(), authBearer))
	if s.cfg.Pprof {
		pp := http.NewServeMux()
		pp.HandleFunc("/debug/pprof/", pprof.Index)
		pp.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		pp.HandleFunc("/debug/pprof/profile", pprof.Profile)
		pp.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		pp.HandleFunc("/debug/pprof/trace", pprof.Trace)
		s.mux.Handle("/debug/pprof/", s.requireAuth(pp, authBearer))
	}
	if s.auth != nil {
		s.mountLogin()
	}
}

// Mount registers h for pattern (http.ServeMux syntax, e.g. "GET /api/v1/logs")
// behind the token check: the bearer header or the dashboard's session
// cookie (see LoginPath). Call it before Serve.
func (s *Server) Mount(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.requireAuth(h, authBrowser))
}

// Store returns the server's store (for query handlers).
func (s *Server) Store() *store.Store { return s.store }

// Handler returns the server's root handler (tests and embedding).
func (s *Server) Handler() http.Handler { return s.mux }

// ListenAndServe listens on cfg.Addr (and cfg.GRPC.Addr, if set) and calls
// Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		_ = s.Close(context.Background())
		return fmt.Errorf("listen: %w", err)
	}
	if s.cfg.GRPC.Addr != "" {
		if s.g.ln, err = net.Listen("tcp", s.cfg.GRPC.Addr); err != nil {
			ln.Close()
			_ = s.Close(context.Background())
			return fmt.Errorf("listen gRPC: %w", err)
		}
	}
	return s.Serve(ctx, ln)
}

// Serve answers requests on ln until ctx is done, then shuts down
// gracefully: new requests get 503 + Retry-After, requests in flight finish
// (their group commit included), the store drains its queue, commits and
// closes. It returns nil on a clean stop, or the error that stopped the HTTP
// server or the store. It closes ln and the store in every case.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.served.CompareAndSwap(false, true) {
		ln.Close()
		if s.g.ln != nil {
			s.g.ln.Close()
		}
		return errors.New("ingestsrv: Serve called twice")
	}
	s.warnExposure(ln.Addr())
	adm := newAdmitListener(ln, s.cfg.MaxConns, s.cfg.MaxConnsPerSource, s.cfg.MaxRejecting, func(o rejectOutcome, perSource bool) {
		switch {
		case perSource:
			s.stats.rejected(reasonConnSource)
		case o == rejectAnswered:
			s.stats.rejected(reasonConnLimit)
		case o == rejectRefused:
			s.stats.rejected(reasonConnRefused)
		case o == rejectIdle:
			s.stats.rejected(reasonConnIdle)
		}
	})
	defer adm.wait()
	s.admit.Store(adm)
	ln = adm
	grpcSrv := s.startGRPC(adm)
	hs := &http.Server{
		Handler:           grpcSrv.route(s.mux),
		Protocols:         httpProtocols(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	s.log.Info("serving OTLP/HTTP", "addr", ln.Addr().String(), "data", s.cfg.Dir, "sync", string(s.cfg.Sync))

	var err error
	select {
	case err = <-serveErr: // the listener failed
		err = fmt.Errorf("serve: %w", err)
		s.draining.Store(true)
		_ = hs.Close()
	case err = <-grpcSrv.failed(): // the gRPC listener failed
		err = fmt.Errorf("serve gRPC: %w", err)
		s.draining.Store(true)
		_ = hs.Close()
	case <-ctx.Done():
		err = s.shutdown(hs, serveErr)
	}
	err = errors.Join(err, grpcSrv.stop(s.cfg.ShutdownTimeout))
	closeCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(err, s.Close(closeCtx))
}

// shutdown stops the HTTP server after ctx ended: refuse new work, let the
// requests in flight finish, return the Serve error if it is not the
// expected http.ErrServerClosed.
func (s *Server) shutdown(hs *http.Server, serveErr <-chan error) error {
	s.draining.Store(true)
	s.log.Info("shutting down: draining requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	var err error
	if e := hs.Shutdown(ctx); e != nil {
		err = fmt.Errorf("drain requests: %w", e)
		_ = hs.Close()
	}
	if e := <-serveErr; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve: %w", e))
	}
	return err
}

// Close drains and closes the store (Serve calls it; call it yourself only
// when Serve never ran). It is idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.draining.Store(true)
		if err := s.store.Close(ctx); err != nil {
			s.closeErr = fmt.Errorf("close store: %w", err)
			return
		}
		st := s.store.Stats()
		s.log.Info("store closed", "committed_requests", st.Logs.Requests+st.Metrics.Requests+st.Traces.Requests)
	})
	return s.closeErr
}

// probeDir says why dir cannot hold a database, as the operating system
// puts it ("read-only file system", "no space left on device", "permission
// denied"), or "" when a file can be created, written and synced there:
// SQLite's own errors ("unable to open database file (14)", "disk I/O
// error") do not say. A page and a WAL header's worth is written, enough
// for a full disk to refuse it.
func probeDir(dir string) string {
	f, err := os.CreateTemp(dir, ".otelbench-probe-*")
	if err != nil {
		return fmt.Sprintf(" (cause: %v)", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, 8<<10))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Sprintf(" (cause: %v)", err)
	}
	return ""
}

// warnExposure logs a warning when the server listens beyond loopback with
// no token: anyone who can reach it can write and read telemetry.
func (s *Server) warnExposure(addr net.Addr) {
	if s.cfg.AuthToken != "" {
		return
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return
	}
	s.log.Warn("listening on a non-loopback address without --auth-token: anyone who can reach it can read and write data",
		"addr", addr.String())
}

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.draining.Load() {
		w.Header().Set("Retry-After", fmt.Sprint(DefaultRetryAfter))
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("shutting down\n"))
		return
	}
	if err := s.store.Failed(); err != nil { // final: only a restart helps
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "storage failed: %v\n", err)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
