package ingestsrv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// Statuses of refusals whose text never changes, built once: the OTLP/gRPC
// specification (Failures, Throttling) has clients retry UNAVAILABLE, after
// RetryInfo's delay when present, and RESOURCE_EXHAUSTED only when RetryInfo
// is present.
var (
	stUnauthenticated = status.New(codes.Unauthenticated, "missing or wrong bearer token in the authorization metadata")
	stShuttingDown    = retryStatus(codes.Unavailable, "server shutting down")
	stOverloaded      = retryStatus(codes.Unavailable, errOverloaded.Error())
	stTooMany         = retryStatus(codes.Unavailable, "too many gRPC requests in flight, retry later")
	stLagging         = retryStatus(codes.Unavailable, "projection backlog over its limit, retry later")
	stQueueFull       = retryStatus(codes.Unavailable, "ingest queue full, retry later")
	stSyncFailed      = retryStatus(codes.Unavailable, "storage failed (an fsync failed); the server must be restarted")
	stStorage         = retryStatus(codes.Unavailable, "storage error, retry later")
	// Disk full is RESOURCE_EXHAUSTED with RetryInfo: the resource may come
	// back (space freed, raw payloads expired), so clients retry later,
	// while a message over the size limit is RESOURCE_EXHAUSTED without
	// RetryInfo, which they drop.
	stDiskFull = retryStatus(codes.ResourceExhausted, "disk full: nothing was stored, retry later")
)

// retryStatus returns a status carrying a RetryInfo of DefaultRetryAfter.
func retryStatus(c codes.Code, msg string) *status.Status {
	st, err := status.New(c, msg).WithDetails(&errdetails.RetryInfo{
		RetryDelay: durationpb.New(DefaultRetryAfter * time.Second),
	})
	if err != nil {
		panic(fmt.Sprintf("build status %v: %v", c, err)) // unreachable: a constant well-formed detail
	}
	return st
}

// grpcExport serves one Export RPC of sig and observes its latency, from
// the handler's start (gRPC has read the message) to its answer.
func (s *Server) grpcExport(ctx context.Context, sig signal.Signal, dec func(any) error, onAck AckFunc) (any, error) {
	start := time.Now()
	resp, err := s.serveExport(ctx, sig, dec, onAck)
	s.latency.observeGRPC(sig, status.Code(err), time.Since(start))
	return resp, err
}

// serveExport checks, charges and stores one Export RPC through the same
// commit as the HTTP handler, answered OK only once Store.Append returned
// nil (then onAck, if set, sees the request).
func (s *Server) serveExport(ctx context.Context, sig signal.Signal, dec func(any) error, onAck AckFunc) (any, error) {
	if ctx.Value(admittedKey{}) == nil { // came through the HTTP listener
		md, _ := metadata.FromIncomingContext(ctx)
		if err := s.grpcAdmit(md); err != nil {
			return nil, err
		}
	}
	defer s.g.inflight.Add(-1)
	if s.g.inflight.Add(1) > s.maxRequests() {
		return nil, s.grpcReject(reasonQueueFull, stTooMany)
	}
	var m otlpgrpc.Message
	if err := dec(&m); err != nil {
		return nil, s.grpcReadErr(err)
	}
	defer m.Free()
	ch := charge{b: &s.budget}
	defer func() { ch.drop(ch.n) }()
	// gRPC has read the message already (bounded by MaxRecv per stream and
	// by MaxStreams × MaxConns streams); it is charged now, and refused if
	// the budget cannot hold it. commit charges its decoding.
	n := int64(m.Len())
	if err := ch.grow(n); err != nil {
		return nil, s.grpcReject(reasonQueueFull, stOverloaded)
	}
	var body []byte
	if m.Contiguous() {
		body = m.Bytes(nil)
	} else {
		// Larger than one of gRPC's pooled buffers: one copy into a body
		// buffer of the HTTP path's pool, charged as it is made.
		if err := ch.grow(n); err != nil {
			return nil, s.grpcReject(reasonQueueFull, stOverloaded)
		}
		pooled := s.getBody()
		body = m.Bytes(*pooled)
		defer func() { *pooled = body; s.putBody(pooled) }()
	}
	answer, err := s.commit(ctx, sig, otlpcodec.EncodingProto, body, &ch, &s.g.stats)
	if err != nil {
		return nil, s.grpcCommitErr(err)
	}
	if onAck != nil {
		onAck(sig, body)
	}
	if len(answer) == 0 {
		return emptyAnswer, nil
	}
	return otlpgrpc.Raw(answer), nil
}

// emptyAnswer is every signal's answer without partial_success (an empty
// message encodes to no bytes), shared by all calls: gRPC only reads it.
// One allocation less a request; at 1 record a request the GC's share of
// serve's CPU is large (the heap sits near its soft limit).
var emptyAnswer = otlpgrpc.Raw(nil)

// grpcCommitErr maps an error of Server.commit to the status the OTLP/gRPC
// specification gives its HTTP answer's meaning: bad input INVALID_ARGUMENT;
// a request over a size limit (records, decode cost) RESOURCE_EXHAUSTED
// without RetryInfo, which clients do not retry; overload UNAVAILABLE.
func (s *Server) grpcCommitErr(err error) error {
	var costly *tooCostlyError
	var many *tooManyRecordsError
	var stored *storeError
	switch {
	case errors.As(err, &stored):
		return s.grpcStoreErr(stored.err)
	case errors.As(err, &many):
		return s.grpcReject(reasonTooManyRecords, status.New(codes.ResourceExhausted, err.Error()))
	case errors.As(err, &costly):
		return s.grpcReject(reasonTooCostly, status.New(codes.ResourceExhausted, err.Error()))
	case errors.Is(err, otlpcodec.ErrTooDeep):
		return s.grpcReject(reasonTooDeep, status.New(codes.InvalidArgument, err.Error()))
	case errors.Is(err, errOverloaded):
		return s.grpcReject(reasonQueueFull, stOverloaded)
	}
	return s.grpcReject(reasonDecode, status.New(codes.InvalidArgument, err.Error()))
}

// grpcReadErr maps a failure of gRPC to read the message: over the size
// limit (gRPC's own RESOURCE_EXHAUSTED), an unknown grpc-encoding
// (UNIMPLEMENTED), corrupt compression (INTERNAL from gRPC, answered
// INVALID_ARGUMENT: the client sent bad data), or the stream's end.
func (s *Server) grpcReadErr(err error) error {
	st := status.Convert(err)
	switch st.Code() {
	case codes.ResourceExhausted:
		return s.grpcReject(reasonTooLarge, st)
	case codes.Unimplemented:
		return s.grpcReject(reasonUnsupportedMedia, st)
	case codes.Internal:
		return s.grpcReject(reasonDecode, status.New(codes.InvalidArgument, st.Message()))
	}
	return err // canceled or broken stream: nobody reads the answer
}

// grpcStoreErr maps a failed Store.Append like rejectStore does for HTTP.
func (s *Server) grpcStoreErr(err error) error {
	switch {
	case errors.Is(err, store.ErrQueueFull):
		return s.grpcReject(reasonQueueFull, stQueueFull)
	case errors.Is(err, store.ErrClosed):
		return s.grpcReject(reasonShuttingDown, stShuttingDown)
	case errors.Is(err, store.ErrSyncFailed):
		return s.grpcReject(reasonStorage, stSyncFailed)
	case errors.Is(err, store.ErrDiskFull):
		s.log.Error("store append: disk full", "err", err)
		return s.grpcReject(reasonStorage, stDiskFull)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The client is gone or gave up; not an OK.
		return s.grpcReject(reasonStorage, status.FromContextError(err))
	}
	s.log.Error("store append", "err", err)
	return s.grpcReject(reasonStorage, stStorage)
}

// grpcReject counts reason for gRPC and in the totals, and returns st as
// the RPC's error.
func (s *Server) grpcReject(reason rejectReason, st *status.Status) error {
	s.rejectedGRPC(reason)
	return st.Err()
}

func (s *Server) rejectedGRPC(reason rejectReason) {
	s.stats.rejected(reason)
	s.g.stats.rejected(reason)
}
