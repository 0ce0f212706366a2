package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/h2grpc"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// GRPCClient names the gRPC client implementation of protocol grpc.
type GRPCClient string

// gRPC clients. GRPCClientAuto is the lean client for plain-text endpoints
// and grpc-go for TLS ones; the lean client makes 1.3× to 1.9× the records
// per CPU-second of grpc-go (scripts/bench-grpc.sh, client phase, 1 to 32
// workers).
const (
	GRPCClientAuto GRPCClient = ""
	GRPCClientGo   GRPCClient = "grpc-go" // google.golang.org/grpc (grpc.go)
	GRPCClientLean GRPCClient = "lean"    // internal/h2grpc, plain text only (grpc_lean.go)
)

// validate checks the client against the endpoint's transport security.
func (g GRPCClient) validate(tls bool) error {
	switch g {
	case GRPCClientAuto, GRPCClientGo:
	case GRPCClientLean:
		if tls {
			return fmt.Errorf("grpc client lean speaks plain text only (http://host:port or --insecure); use grpc-go for TLS")
		}
	default:
		return fmt.Errorf("grpc client %q (want grpc-go or lean)", g)
	}
	return nil
}

// reservedMetadata are headers the gRPC transport sets itself; a user
// header of that name would make the request malformed, so it is left out
// (grpc-go drops or overrides them too).
var reservedMetadata = []string{"content-type", "te", "grpc-encoding", "grpc-accept-encoding", "grpc-timeout", "user-agent", "host", "connection"}

// leanGRPCSender exports pre-encoded payloads over h2grpc connections; each
// worker (one stream at a time) uses one of them.
type leanGRPCSender struct {
	clients []*h2grpc.Client
	next    atomic.Uint64
}

func newLeanGRPCSender(cfg Config, target string, compression otlpgen.Compression) (*leanGRPCSender, error) {
	hc := h2grpc.Config{Addr: target, Methods: make([]h2grpc.Method, signal.Count), Timeout: cfg.Timeout,
		UserAgent: "otelbench-load/1"}
	if compression != "" && compression != otlpgen.CompressionNone {
		hc.Compressor = string(compression)
	}
	for _, sig := range signal.All() {
		m := h2grpc.Method{Path: methods[sig.Index()]}
		for k, vs := range cfg.headersFor(sig) {
			if k = strings.ToLower(k); !slices.Contains(reservedMetadata, k) && !strings.HasPrefix(k, ":") {
				for _, v := range vs {
					m.Metadata = append(m.Metadata, [2]string{k, v})
				}
			}
		}
		slices.SortFunc(m.Metadata, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		hc.Methods[sig.Index()] = m
	}
	s := &leanGRPCSender{}
	for range grpcConnections(cfg) {
		c, err := h2grpc.NewClient(hc)
		if err != nil {
			s.close()
			return nil, err
		}
		s.clients = append(s.clients, c)
	}
	return s, nil
}

// exchanger returns the next worker's exchanger: connections are dealt
// round robin.
func (s *leanGRPCSender) exchanger(cfg Config) exchanger {
	c := s.clients[(s.next.Add(1)-1)%uint64(len(s.clients))]
	return &leanGRPCExchanger{call: c.NewCall(), deadline: callDeadline{timeout: cfg.Timeout}}
}

func (s *leanGRPCSender) close() {
	for _, c := range s.clients {
		_ = c.Close()
	}
}

type leanGRPCExchanger struct {
	call     *h2grpc.Call
	deadline callDeadline
}

func (e *leanGRPCExchanger) close() { e.deadline.close() }

// send calls the Export RPC of p's signal with body, which h2grpc has
// copied once send returns. A status from the server becomes a response,
// as grpcExchanger.send makes it; a failure without one is an error.
func (e *leanGRPCExchanger) send(ctx context.Context, p *otlpgen.Payload, body []byte, buf *bytes.Buffer) (response, error) {
	ctx = e.deadline.context(ctx, nil)
	if err := e.call.Invoke(ctx, p.Signal.Index(), body); err != nil {
		return response{}, err // wraps errNoAnswer (h2grpc.ErrNoAnswer)
	}
	if e.call.Code() == codes.OK {
		return response{status: 200, grpcCode: int(codes.OK) + 1, body: e.call.Reply()}, nil
	}
	return statusResponse(e.call.Status(), buf), nil
}

// pickGRPCSender sets r.exchange to the gRPC client Config.GRPCClient
// names: the lean one for plain text unless grpc-go is asked for.
func (r *runner) pickGRPCSender() error {
	target, tls, err := grpcTarget(r.cfg.Endpoint, r.cfg.Insecure)
	if err != nil {
		return err
	}
	if !tls && r.cfg.GRPCClient != GRPCClientGo {
		ls, err := newLeanGRPCSender(r.cfg, target, r.cfg.Payload.Compression)
		if err != nil {
			return err
		}
		r.closeSender = ls.close
		r.exchange = func(context.Context) exchanger { return ls.exchanger(r.cfg) }
		return nil // h2grpc copies a body before Invoke returns: bodies are reused at once
	}
	gs, err := newGRPCSender(r.cfg, r.cfg.Payload.Compression)
	if err != nil {
		return err
	}
	r.closeSender = gs.close
	r.exchange = func(context.Context) exchanger { return gs.exchanger(r.cfg) }
	// gRPC may still be writing a body after the call returned (an
	// early answer): a stamped body is reused only once gRPC hands it
	// back (bodyRecycler).
	r.freshBodies = true
	return nil
}

// Procs returns the most OS threads running Go code (GOMAXPROCS) the run
// puts to use, or 0 for no bound. A closed-model run on the lean gRPC
// client has each worker's call and its connection's reader take turns, so
// it needs no more than one per worker: with one worker on 2 cores a
// second thread only spins and wakes threads, 18% of the CPU per request
// (scripts/bench-grpc.sh's client phase, GOMAXPROCS 1 against 2).
func (c Config) Procs() int {
	c = c.withDefaults()
	if !c.isGRPC() || c.open() || c.GRPCClient == GRPCClientGo {
		return 0
	}
	if _, tls, err := grpcTarget(c.Endpoint, c.Insecure); err != nil || tls {
		return 0
	}
	return c.Concurrency
}
