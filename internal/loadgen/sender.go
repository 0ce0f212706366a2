package loadgen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// response is what the accounting needs from one HTTP exchange.
type response struct {
	status      int
	contentType string
	retryAfter  string
	body        []byte // at most DefaultMaxResponse bytes, valid until the next send
	grpcCode    int    // gRPC status code + 1 over gRPC (status then holds its HTTP equivalent); 0 over HTTP
	// retryInfo is a gRPC RetryInfo delay, which replaces Retry-After's
	// whole seconds when hasRetryInfo.
	retryInfo    time.Duration
	hasRetryInfo bool
}

// sender posts pre-encoded payloads over a tuned net/http Transport:
// keep-alive connections, one idle connection kept per worker, no response
// decompression, no HTTP/2 (OTLP/HTTP servers speak HTTP/1.1).
type sender struct {
	transport *http.Transport
	client    *http.Client
	urls      [signal.Count]string
	headers   [signal.Count]http.Header // per signal, read-only once built
}

func newSender(cfg Config, pool *otlpgen.Pool) (*sender, error) {
	tlsCfg, err := cfg.TLS.clientConfig("")
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		TLSClientConfig:       tlsCfg,
		Proxy:                 nil, // a load generator must hit the endpoint it was given
		DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          2 * cfg.Concurrency,
		MaxIdleConnsPerHost:   cfg.Concurrency,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        16 << 10,
	}
	s := &sender{transport: tr, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}}
	for _, sig := range signal.All() {
		if s.urls[sig.Index()], err = cfg.signalURL(sig); err != nil {
			return nil, err
		}
		h := cfg.headersFor(sig)
		if ps := pool.Payloads(sig); len(ps) > 0 {
			h.Set("Content-Type", ps[0].ContentType)
			if ps[0].ContentEncoding != "" {
				h.Set("Content-Encoding", ps[0].ContentEncoding)
			}
		}
		if h.Get("User-Agent") == "" {
			h.Set("User-Agent", userAgent)
		}
		s.headers[sig.Index()] = h
	}
	return s, nil
}

// send posts p and reads at most DefaultMaxResponse bytes of the answer
// into buf. A non-nil error means there was no HTTP response.
func (s *sender) send(ctx context.Context, p *otlpgen.Payload, body []byte, buf *bytes.Buffer) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.urls[p.Signal.Index()], bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	// The header map is shared by every request of the signal: neither
	// http.Client (no jar, no redirects of POST bodies) nor Transport writes it.
	req.Header = s.headers[p.Signal.Index()]
	resp, err := s.client.Do(req)
	if err != nil {
		return response{}, err
	}
	buf.Reset()
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, DefaultMaxResponse))
	if err == nil {
		// Drain what is left (bounded) so the connection can be reused.
		_, err = io.CopyN(io.Discard, resp.Body, 1<<20)
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	_ = resp.Body.Close()
	r := response{
		status:      resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
		retryAfter:  resp.Header.Get("Retry-After"),
		body:        buf.Bytes(),
	}
	// A response whose body broke off still carries its status; only the
	// partial_success count may be missing, which parseRejected reports.
	_ = err
	return r, nil
}

// close releases idle connections.
func (s *sender) close() { s.transport.CloseIdleConnections() }
