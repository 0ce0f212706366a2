package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/h2grpc"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// DefaultStreamsPerConn is how many workers share one gRPC connection when
// Config.Connections is 0: each connection has one reader and one writer
// goroutine, and a few connections keep them from serializing the workers.
const DefaultStreamsPerConn = 16

// errNoAnswer marks a gRPC call that failed without an answer from the
// server (refused, reset, timed out before any header): a transport error,
// not a status. Both clients' errors wrap it.
var errNoAnswer = h2grpc.ErrNoAnswer

// grpcSender exports pre-encoded payloads over Connections gRPC
// connections; each worker (one stream at a time) uses one of them. Bodies
// travel as they are (otlpgrpc.Codec), compressed by gRPC when asked.
type grpcSender struct {
	conns []*grpc.ClientConn
	next  atomic.Uint64
	opts  []grpc.CallOption // the codec and compressor of every call
	// md holds each signal's headers (Config.headersFor) as metadata, read-only; shared says
	// they are the same for every signal, so a worker's call context carries them.
	md     [signal.Count]metadata.MD
	shared bool
}

func newGRPCSender(cfg Config, compression otlpgen.Compression) (*grpcSender, error) {
	target, useTLS, err := grpcTarget(cfg.Endpoint, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if useTLS {
		host, _, _ := net.SplitHostPort(target)
		tc, err := cfg.TLS.clientConfig(host)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(tc)
	}
	// Every call passes the same options, the codec among them: with
	// none set on the connection gRPC uses the call's slice as it is
	// instead of joining the two into a new one per call.
	s := &grpcSender{shared: true, opts: []grpc.CallOption{grpc.ForceCodecV2(otlpgrpc.Codec{})}}
	for _, sig := range signal.All() {
		md := metadata.MD{}
		for k, v := range cfg.headersFor(sig) {
			md[strings.ToLower(k)] = v
		}
		s.md[sig.Index()] = md
		s.shared = s.shared && maps.EqualFunc(md, s.md[0], slices.Equal)
	}
	if compression != "" && compression != otlpgen.CompressionNone {
		s.opts = append(s.opts, grpc.UseCompressor(string(compression)))
	}
	for range grpcConnections(cfg) {
		cc, err := grpc.NewClient(target,
			grpc.WithTransportCredentials(creds),
			grpc.WithUserAgent("otelbench-load/1"),
			grpc.WithSharedWriteBuffer(true),
			// Retries are the runner's (Config.Retry), counted attempt by attempt.
			grpc.WithDisableRetry(),
		)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("grpc client for %s: %w", target, err)
		}
		cc.Connect()
		s.conns = append(s.conns, cc)
	}
	return s, nil
}

// grpcConnections is how many connections the workers share.
func grpcConnections(cfg Config) int {
	if cfg.Connections > 0 {
		return cfg.Connections
	}
	return (cfg.Concurrency + DefaultStreamsPerConn - 1) / DefaultStreamsPerConn
}

// exchanger returns the next worker's exchanger: connections are dealt
// round robin.
func (s *grpcSender) exchanger(cfg Config) exchanger {
	cc := s.conns[(s.next.Add(1)-1)%uint64(len(s.conns))]
	e := &grpcExchanger{s: s, cc: cc, deadline: callDeadline{timeout: cfg.Timeout}, bodies: make(bodyPool, 2)}
	e.opts = append(slices.Clip(s.opts), grpc.Header(&e.header), grpc.Trailer(&e.trailer))
	return e
}

func (s *grpcSender) close() {
	for _, cc := range s.conns {
		_ = cc.Close()
	}
}

type grpcExchanger struct {
	s        *grpcSender
	cc       *grpc.ClientConn
	deadline callDeadline
	bodies   bodyPool

	// opts are s.opts and the two that fill header and trailer, the
	// metadata of the worker's last call (see answered).
	opts            []grpc.CallOption
	header, trailer metadata.MD
}

// callDeadline is a worker's call context: ctx with a deadline, shared by
// the worker's calls until less than the timeout is left, so a call gets
// between Timeout and 1.5×Timeout (as the h1 sender does). A context and
// its timer per call were ~10% of the generator's CPU profile at 100
// records a request (WithDeadline and the runtime's timer checks).
type callDeadline struct {
	timeout  time.Duration
	parent   context.Context
	call     context.Context
	cancel   context.CancelFunc
	deadline time.Time
}

// context returns the context of the next call; md, when not empty, goes
// with it as gRPC metadata.
func (d *callDeadline) context(ctx context.Context, md metadata.MD) context.Context {
	now := time.Now()
	if d.call != nil && ctx == d.parent && d.deadline.Sub(now) >= d.timeout {
		return d.call
	}
	d.close()
	c := ctx
	if len(md) > 0 {
		c = metadata.NewOutgoingContext(c, md)
	}
	d.parent, d.deadline = ctx, now.Add(d.timeout*3/2)
	d.call, d.cancel = context.WithDeadline(c, d.deadline)
	return d.call
}

func (d *callDeadline) close() {
	if d.cancel != nil {
		d.cancel()
	}
}

// bodyPool takes back the stamped bodies gRPC is done with, so that a
// worker reuses them instead of allocating one per request: at 100 records
// a request, live times, allocating and collecting each body was a quarter
// of the generator's CPU profile.
type bodyPool chan *[]byte

// Get is never called for bodies given to otlpgrpc.Recycled; it is
// mem.BufferPool's.
func (bodyPool) Get(n int) *[]byte { b := make([]byte, n); return &b }

// Put keeps b if there is room.
func (p bodyPool) Put(b *[]byte) {
	select {
	case p <- b:
	default:
	}
}

// recycled returns a body buffer gRPC is done with, or nil (implements
// bodyRecycler).
func (e *grpcExchanger) recycled() []byte {
	select {
	case b := <-e.bodies:
		return (*b)[:0]
	default:
		return nil
	}
}

func (e *grpcExchanger) close() { e.deadline.close() }

// send calls the Export RPC of p's signal with body. A status from the
// server becomes a response (its HTTP-equivalent status, the gRPC code, a
// RetryInfo delay as retryAfter); a failure without one is an error.
func (e *grpcExchanger) send(ctx context.Context, p *otlpgen.Payload, body []byte, buf *bytes.Buffer) (response, error) {
	var shared metadata.MD
	if e.s.shared {
		shared = e.s.md[0]
	}
	ctx = e.deadline.context(ctx, shared)
	if md := e.s.md[p.Signal.Index()]; !e.s.shared && len(md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	e.header, e.trailer = nil, nil // gRPC leaves them alone when no stream was opened
	var reply otlpgrpc.Message
	msg := otlpgrpc.Raw(body)
	if len(body) > 0 && len(p.Body) > 0 && &body[0] != &p.Body[0] { // a stamped copy: reuse it once sent
		msg = otlpgrpc.Recycled(&body, e.bodies)
	}
	err := e.cc.Invoke(ctx, methods[p.Signal.Index()], msg, &reply, e.opts...)
	defer reply.Free()
	st := status.Convert(err)
	if err != nil && !e.answered() {
		return response{}, fmt.Errorf("%w: %v", errNoAnswer, st.Message())
	}
	if err != nil {
		return statusResponse(st, buf), nil
	}
	buf.Reset()
	buf.Write(reply.Bytes(nil))
	return response{status: 200, grpcCode: int(codes.OK) + 1, body: buf.Bytes()}, nil
}

// statusResponse is the response of an answer with a status other than
// OK: its HTTP equivalent, the code, a RetryInfo delay, and the message in
// buf as the body (what classifyStatus reports).
func statusResponse(st *status.Status, buf *bytes.Buffer) response {
	resp := response{status: httpStatus(st), grpcCode: int(st.Code()) + 1}
	if d := retryInfo(st); d >= 0 {
		resp.retryInfo, resp.hasRetryInfo = d, true
	}
	buf.Reset()
	buf.WriteString(st.Message())
	resp.body = buf.Bytes()
	return resp
}

// methods are the Export method names by signal index.
var methods = func() (m [signal.Count]string) {
	for _, sig := range signal.All() {
		m[sig.Index()] = otlpgrpc.Method(sig)
	}
	return m
}()

// httpStatus maps a gRPC status to the HTTP status the OTLP specification
// gives the same meaning, so that status classes and retries work alike
// for both transports: OK 200, INVALID_ARGUMENT 400, RESOURCE_EXHAUSTED 429
// with RetryInfo (retryable) or 413 without (too large, not retryable),
// UNAVAILABLE 503, DEADLINE_EXCEEDED 504; the other codes the OTLP
// specification retries (CANCELLED, ABORTED, OUT_OF_RANGE, DATA_LOSS) 502,
// and the rest 500. The code itself is counted too (SignalStats.GRPCStatus).
func httpStatus(st *status.Status) int {
	switch st.Code() {
	case codes.OK:
		return 200
	case codes.InvalidArgument:
		return 400
	case codes.ResourceExhausted:
		if retryInfo(st) >= 0 {
			return 429
		}
		return 413
	case codes.Unavailable:
		return 503
	case codes.DeadlineExceeded:
		return 504
	case codes.Canceled, codes.Aborted, codes.OutOfRange, codes.DataLoss:
		return 502
	case codes.Unauthenticated:
		return 401
	case codes.Unimplemented:
		return 501
	}
	return 500
}

// retryInfo returns st's RetryInfo delay, or -1 without one.
func retryInfo(st *status.Status) time.Duration {
	if st.Code() == codes.OK {
		return -1
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return max(ri.GetRetryDelay().AsDuration(), 0)
		}
	}
	return -1
}

// answered reports whether the server answered the last call, which tells
// a server's UNAVAILABLE from a connection that failed (both are
// UNAVAILABLE to the caller). gRPC keeps the metadata of a response's
// headers, or of its trailers when it is trailers-only, only once it has
// checked that they are gRPC's (content-type application/grpc, which it
// keeps among them); a stream that ended without them has neither. A stats
// handler seeing InHeader and InTrailer tells the same, but gRPC builds
// seven events a call for it: 170 allocations a call against 159
// (BenchmarkGRPCSend, client and server together; grpc-go's bare Invoke
// makes 143).
func (e *grpcExchanger) answered() bool { return len(e.header) > 0 || len(e.trailer) > 0 }

// writeGRPCStatus prints the gRPC codes of a run, most frequent first (the
// status table above shows their HTTP equivalents).
func writeGRPCStatus(w io.Writer, counts map[string]int64) {
	if len(counts) == 0 {
		return
	}
	names := slices.Collect(maps.Keys(counts))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, counts[n])
	}
	fmt.Fprintf(w, "grpc status: %s\n", strings.Join(parts, ", "))
}
