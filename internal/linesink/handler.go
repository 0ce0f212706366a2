package linesink

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/signal"
)

// DefaultMaxBody bounds a request body, compressed and decompressed, as
// the ingest server does by default.
const DefaultMaxBody int64 = 16 << 20

// account decodes a logs request body (decompressed) and accounts for it.
func (a *Accounting) account(enc otlpcodec.Encoding, body []byte, now time.Time) error {
	var b batch
	err := forEachBody(enc, body, b.offer)
	if err != nil {
		return err
	}
	a.add(&b, now)
	return nil
}

// Handler returns the accounting-only OTLP/HTTP receiver: POST /v1/logs is
// accounted for and answered 200; /v1/metrics and /v1/traces are answered
// 200 and ignored (agents that ship their own telemetry are not failed).
func (a *Accounting) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+signal.Logs.Path(), func(w http.ResponseWriter, r *http.Request) {
		enc, comp, err := media(r)
		if err != nil {
			reply(w, enc, http.StatusUnsupportedMediaType, err)
			return
		}
		body, err := otlpcodec.ReadBody(nil, r.Body, comp, DefaultMaxBody, r.ContentLength, nil)
		if err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, otlpcodec.ErrTooLarge) {
				code = http.StatusRequestEntityTooLarge
			}
			reply(w, enc, code, err)
			return
		}
		if err := a.account(enc, body, time.Now()); err != nil {
			reply(w, enc, http.StatusBadRequest, err)
			return
		}
		reply(w, enc, http.StatusOK, nil)
	})
	for _, sig := range []signal.Signal{signal.Metrics, signal.Traces} {
		mux.HandleFunc("POST "+sig.Path(), func(w http.ResponseWriter, r *http.Request) {
			enc, _, _ := media(r)
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, DefaultMaxBody))
			w.Header().Set("Content-Type", enc.ContentType())
			_, _ = w.Write(otlpcodec.SuccessResponse(sig, enc))
		})
	}
	return mux
}

func media(r *http.Request) (otlpcodec.Encoding, otlpcodec.Compression, error) {
	enc, err := otlpcodec.ParseContentType(r.Header.Get("Content-Type"))
	if err != nil {
		return enc, 0, err
	}
	comp, err := otlpcodec.ParseCompression(r.Header.Get("Content-Encoding"))
	return enc, comp, err
}

// reply answers as the OTLP/HTTP specification says: an empty
// ExportLogsServiceResponse, or a google.rpc.Status with the error.
func reply(w http.ResponseWriter, enc otlpcodec.Encoding, code int, err error) {
	w.Header().Set("Content-Type", enc.ContentType())
	w.WriteHeader(code)
	if err == nil {
		_, _ = w.Write(otlpcodec.SuccessResponse(signal.Logs, enc))
		return
	}
	_, _ = w.Write(otlpcodec.Status(enc, otlpcodec.CodeInvalidArgument, err.Error()))
}

// Tap wraps next, an OTLP/HTTP handler that stores what it acknowledges
// (the ingest server), and accounts for a logs request when next answered
// it 2xx: the receipt time is the acknowledgement. It reads each logs body
// (up to maxBody bytes as sent) before passing it on.
func (a *Accounting) Tap(next http.Handler, maxBody int64) http.Handler {
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != signal.Logs.Path() {
			next.ServeHTTP(w, r)
			return
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			http.Error(w, fmt.Sprintf("read body: %v", err), http.StatusBadRequest)
			return
		}
		if int64(len(raw)) > maxBody {
			http.Error(w, fmt.Sprintf("body over %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		rec := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code < 200 || rec.code > 299 {
			return
		}
		now := time.Now()
		enc, comp, err := media(r)
		if err != nil {
			return // next accepted what this sink cannot read: unreachable with the ingest server
		}
		body, err := otlpcodec.ReadBody(nil, bytes.NewReader(raw), comp, DefaultMaxBody, int64(len(raw)), nil)
		if err != nil {
			a.unreadable()
			return
		}
		a.acked(enc, body, now)
	})
}

// acked accounts for a logs request body (decompressed) that the server in
// front of the sink acknowledged at now.
func (a *Accounting) acked(enc otlpcodec.Encoding, body []byte, now time.Time) {
	if err := a.account(enc, body, now); err != nil {
		a.unreadable()
	}
}

// unreadable counts a request acknowledged by the server in front of the
// sink that the sink cannot read: counted, not lost silently.
func (a *Accounting) unreadable() {
	a.mu.Lock()
	a.unparseable++
	a.mu.Unlock()
}

// statusWriter records the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = cmp.Or(s.code, code)
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.code = cmp.Or(s.code, http.StatusOK)
	return s.ResponseWriter.Write(b)
}
