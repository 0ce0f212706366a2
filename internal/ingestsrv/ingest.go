package ingestsrv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// errOverloaded means the in-flight memory budget is spent.
var errOverloaded = errors.New("server overloaded: in-flight memory budget spent")

// budget is a non-blocking byte semaphore: charge fails at once when the
// total would exceed max, so overload turns into 503s, never into memory.
type budget struct {
	max  int64
	used atomic.Int64
}

func (b *budget) charge(n int64) error {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return errOverloaded
	}
	return nil
}

func (b *budget) release(n int64) { b.used.Add(-n) }

// charge is what one request holds of the budget, from its first byte read
// until its answer; the transports charge the body, commit the rest.
type charge struct {
	b *budget
	n int64
}

// grow charges n more bytes, or fails with errOverloaded.
func (c *charge) grow(n int64) error {
	if err := c.b.charge(n); err != nil {
		return err
	}
	c.n += n
	return nil
}

// drop gives n bytes of the charge back.
func (c *charge) drop(n int64) {
	c.b.release(n)
	c.n -= n
}

// ingestHandler serves POST <sig.Path()> and observes each answer's latency.
func (s *Server) ingestHandler(sig signal.Signal) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := s.serveIngest(w, r, sig)
		s.latency.observe(sig, status, time.Since(start))
	}
}

// serveIngest checks the request's method, media and the server's state,
// ingests it and returns the status answered.
func (s *Server) serveIngest(w http.ResponseWriter, r *http.Request, sig signal.Signal) int {
	// The request's encoding, when it is one of ours, is also the
	// encoding of every answer, errors included.
	enc, encErr := otlpcodec.ParseContentType(r.Header.Get("Content-Type"))
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return s.reject(w, enc, http.StatusMethodNotAllowed, reasonMethod, otlpcodec.CodeUnimplemented,
			fmt.Sprintf("method %s not allowed, use POST", r.Method))
	}
	if encErr != nil {
		return s.reject(w, 0, http.StatusUnsupportedMediaType, reasonUnsupportedMedia, otlpcodec.CodeInvalidArgument, encErr.Error())
	}
	comp, err := otlpcodec.ParseCompression(r.Header.Get("Content-Encoding"))
	if err != nil {
		return s.reject(w, enc, http.StatusUnsupportedMediaType, reasonUnsupportedMedia, otlpcodec.CodeInvalidArgument, err.Error())
	}
	if s.draining.Load() {
		return s.retryLater(w, enc, reasonShuttingDown, "server shutting down")
	}
	if s.cfg.MaxLagRecords > 0 && s.store.Stats().LagRecords > s.cfg.MaxLagRecords {
		return s.retryLater(w, enc, reasonQueueFull, "projection backlog over its limit, retry later")
	}
	return s.ingest(w, r, sig, enc, comp)
}

// ingest reads, decodes, validates and stores one request, charging its
// memory to the budget from the first byte until the answer, and returns
// the status answered.
func (s *Server) ingest(w http.ResponseWriter, r *http.Request, sig signal.Signal, enc otlpcodec.Encoding, comp otlpcodec.Compression) int {
	ch := charge{b: &s.budget}
	defer func() { ch.drop(ch.n) }()
	// The body is read into a pooled buffer, charged to the budget at its capacity (ReadBody
	// charges only the capacity it adds as bytes arrive), and returned to the pool once the
	// answer is written: store.Append does not keep the payload past its return. A pooled
	// buffer too small for the declared length is let go, so ReadBody grows one of the right
	// size without copying the pooled one.
	pooled := s.getBody()
	if r.ContentLength >= 0 && int64(cap(*pooled)) <= r.ContentLength {
		*pooled = nil
	}
	if err := ch.grow(int64(cap(*pooled))); err != nil {
		s.putBody(pooled)
		return s.rejectRead(w, enc, err)
	}
	src := io.Reader(r.Body)
	var rate *rateReader
	if s.cfg.MinBodyRate > 0 {
		rate = s.getRateReader(w, r.Body, time.Now())
		src = rate
	}
	body, err := otlpcodec.ReadBody(*pooled, src, comp, s.cfg.MaxBody, r.ContentLength, ch.grow)
	if rate != nil {
		rate.finish()
		s.putRateReader(rate)
	}
	defer func() {
		if cap(body) > cap(*pooled) {
			*pooled = body // grown past the pooled buffer: keep the bigger one
		}
		s.putBody(pooled)
	}()
	if err != nil {
		return s.rejectRead(w, enc, err)
	}
	answer, err := s.commit(r.Context(), sig, enc, body, &ch, nil)
	if err != nil {
		return s.rejectRead(w, enc, err)
	}
	return writeBody(w, enc, http.StatusOK, answer)
}

// commit decodes, checks and stores body, a whole request in enc, charging
// its decoding and the payload it stores to ch; both transports come here
// once they have read a request. It counts the request accepted in s.stats
// and, when not nil, in transport, and returns the answer to send: success,
// or partial success in enc. Its errors are for rejectRead (HTTP) and
// grpcCommitErr to answer: bad input (decode errors, otlpcodec.ErrTooDeep,
// *tooCostlyError, *tooManyRecordsError), errOverloaded, or a *storeError.
func (s *Server) commit(ctx context.Context, sig signal.Signal, enc otlpcodec.Encoding, body []byte, ch *charge, transport *counters) ([]byte, error) {
	// Decoding with pdata (JSON, or protobuf the scan cannot take as is) is charged by bytes
	// and by messages (otlpcodec.DecodeCost); a request that could never fit the budget is
	// refused as too costly, not as an overload its client would retry forever.
	var decodeCharge int64
	req, err := otlpcodec.Decode(sig, enc, body, func(n int64) error {
		if ch.n+n > s.budget.max {
			return &tooCostlyError{need: n, body: ch.n, budget: s.budget.max}
		}
		if err := ch.grow(n); err != nil {
			return err
		}
		decodeCharge = n
		return nil
	})
	// The decoded structures are garbage now; the payload (the body itself
	// on the protobuf fast path, a re-encoding otherwise) is what stays.
	ch.drop(decodeCharge)
	if err != nil {
		return nil, err
	}
	if n := int64(req.Records) + req.Rejected; s.cfg.MaxRecords > 0 && n > int64(s.cfg.MaxRecords) {
		return nil, &tooManyRecordsError{n: n, sig: sig, max: s.cfg.MaxRecords}
	}
	if enc == otlpcodec.EncodingJSON || req.Rejected > 0 {
		if err := ch.grow(int64(len(req.Payload))); err != nil {
			return nil, err
		}
	}
	if req.Records > 0 {
		if err := s.store.Append(ctx, sig, req.Payload, req.Records); err != nil {
			return nil, &storeError{err}
		}
	}
	s.stats.accepted(sig, req.Records, len(req.Payload))
	if transport != nil {
		transport.accepted(sig, req.Records, len(req.Payload))
	}
	if req.Rejected > 0 || req.Message != "" {
		resp, err := otlpcodec.Response(sig, enc, req.Rejected, req.Message)
		if err != nil { // unreachable: encoding a two-field message
			s.log.Error("encode partial success", "err", err)
		}
		return resp, nil
	}
	return otlpcodec.SuccessResponse(sig, enc), nil
}

// storeError is a failed store.Append, answered apart from bad input.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// tooManyRecordsError: a request holds more records than Config.MaxRecords
// (HTTP 413, gRPC RESOURCE_EXHAUSTED without RetryInfo).
type tooManyRecordsError struct {
	n   int64
	sig signal.Signal
	max int
}

func (e *tooManyRecordsError) Error() string {
	return fmt.Sprintf("request holds %d %s, more than the limit of %d a request (--max-records); send smaller batches",
		e.n, signal.Pick(e.sig, "log records", "data points", "spans"), e.max) // as partial_success counts them
}

// tooCostlyError: decoding a request would need more memory than the whole
// in-flight budget holds (HTTP 413).
type tooCostlyError struct{ need, body, budget int64 }

func (e *tooCostlyError) Error() string {
	return fmt.Sprintf("request too costly to decode: %d bytes of memory (%d per body byte or %d per OTLP message, "+
		"whichever is more) plus its %d-byte body exceed the in-flight budget of %d bytes (--inflight-bytes); "+
		"send fewer records per request",
		e.need, otlpcodec.DecodeFactor, otlpcodec.MessageDecodeBytes, e.body, e.budget)
}

// maxPooledBody bounds the capacity of a body buffer kept for reuse: bulk requests of
// megabytes are rare, and pooling them would pin their memory between GCs.
const maxPooledBody = 64 << 10

// getBody takes a request body buffer from the server's pool (Server.bodies). At 25,000 mixed
// requests a second each body (~3 KB at 10 records a request) was new garbage, and under the
// server's 40 MiB memory limit the GC ran ~20 times a second.
func (s *Server) getBody() *[]byte {
	if b, ok := s.bodies.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

func (s *Server) putBody(b *[]byte) {
	if cap(*b) > maxPooledBody {
		return
	}
	*b = (*b)[:0]
	s.bodies.Put(b)
}

// rejectRead answers a failure to read, decode or store the body.
func (s *Server) rejectRead(w http.ResponseWriter, enc otlpcodec.Encoding, err error) int {
	var costly *tooCostlyError
	var many *tooManyRecordsError
	var stored *storeError
	switch {
	case errors.As(err, &stored):
		return s.rejectStore(w, enc, stored.err)
	case errors.As(err, &many):
		return s.reject(w, enc, http.StatusRequestEntityTooLarge, reasonTooManyRecords, otlpcodec.CodeInvalidArgument, err.Error())
	case errors.Is(err, otlpcodec.ErrTooLarge):
		return s.reject(w, enc, http.StatusRequestEntityTooLarge, reasonTooLarge, otlpcodec.CodeInvalidArgument,
			fmt.Sprintf("%v (limit %d bytes before and after decompression)", err, s.cfg.MaxBody))
	case errors.As(err, &costly):
		return s.reject(w, enc, http.StatusRequestEntityTooLarge, reasonTooCostly, otlpcodec.CodeInvalidArgument, err.Error())
	case errors.Is(err, otlpcodec.ErrTooDeep):
		return s.reject(w, enc, http.StatusBadRequest, reasonTooDeep, otlpcodec.CodeInvalidArgument, err.Error())
	case errors.Is(err, errOverloaded):
		return s.retryLater(w, enc, reasonQueueFull, err.Error())
	case errors.Is(err, errSlowBody):
		// The connection cannot be read any further: answer and close it.
		w.Header().Set("Connection", "close")
		return s.reject(w, enc, http.StatusRequestTimeout, reasonSlowBody, otlpcodec.CodeInvalidArgument,
			fmt.Sprintf("%v (minimum %d bytes/s after the first %s)", err, s.cfg.MinBodyRate, bodyRateGrace))
	default: // corrupt compression, or the client's connection failed mid-body
		return s.reject(w, enc, http.StatusBadRequest, reasonDecode, otlpcodec.CodeInvalidArgument, err.Error())
	}
}

// rejectStore answers a failed store.Append.
func (s *Server) rejectStore(w http.ResponseWriter, enc otlpcodec.Encoding, err error) int {
	switch {
	case errors.Is(err, store.ErrQueueFull):
		return s.retryLater(w, enc, reasonQueueFull, "ingest queue full, retry later")
	case errors.Is(err, store.ErrClosed):
		return s.retryLater(w, enc, reasonShuttingDown, "server shutting down")
	case errors.Is(err, store.ErrSyncFailed):
		// Final until a restart (the store logged it once; GET /healthz says so); another
		// replica may take the retry.
		return s.retryLater(w, enc, reasonStorage, "storage failed (an fsync failed); the server must be restarted")
	case errors.Is(err, store.ErrDiskFull):
		s.log.Error("store append: disk full", "err", err)
		return s.reject(w, enc, http.StatusInsufficientStorage, reasonStorage, otlpcodec.CodeResourceExhausted,
			"disk full: nothing was stored, retry later")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The client is gone; nobody reads this answer. Not a 200.
		return s.retryLater(w, enc, reasonStorage, "request cancelled before commit")
	default:
		s.log.Error("store append", "err", err)
		return s.retryLater(w, enc, reasonStorage, "storage error, retry later")
	}
}

// retryLater answers 503 + Retry-After (retryable per the OTLP spec).
func (s *Server) retryLater(w http.ResponseWriter, enc otlpcodec.Encoding, reason rejectReason, msg string) int {
	w.Header().Set("Retry-After", strconv.Itoa(DefaultRetryAfter))
	return s.reject(w, enc, http.StatusServiceUnavailable, reason, otlpcodec.CodeUnavailable, msg)
}

// reject counts the reason and answers status with a google.rpc.Status body
// in enc (protobuf when the request's encoding is unknown). It returns status.
func (s *Server) reject(w http.ResponseWriter, enc otlpcodec.Encoding, status int, reason rejectReason, code int32, msg string) int {
	s.stats.rejected(reason)
	if enc == 0 {
		enc = otlpcodec.EncodingProto
	}
	return writeBody(w, enc, status, otlpcodec.Status(enc, code, msg))
}

// writeBody answers status with body in enc and returns status.
func writeBody(w http.ResponseWriter, enc otlpcodec.Encoding, status int, body []byte) int {
	h := w.Header()
	h.Set("Content-Type", enc.ContentType())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}
