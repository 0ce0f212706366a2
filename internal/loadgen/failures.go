package loadgen

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// Failure is one cause of failed requests in a report: how many attempts it took, the signals
// it hit, the first error's text and, for the common mistakes, the likely fix.
type Failure struct {
	Cause      string   `json:"cause"`
	Count      int64    `json:"count"`
	Signals    []string `json:"signals"`
	FirstError string   `json:"first_error"`
	Hint       string   `json:"hint,omitempty"`
	// Fatal marks causes that retrying cannot fix (transport errors, 4xx other than 429): one
	// is enough to fail the run (Report.Check).
	Fatal bool `json:"fatal"`
}

// failureCause is what classifyError and classifyStatus make of one failed attempt.
type failureCause struct {
	cause, hint, text string
	fatal             bool
}

// failureLog groups failed attempts by cause. Only failures take its lock.
type failureLog struct {
	mu     sync.Mutex
	causes map[string]*Failure
	order  []string
	// tlsAddr is the host:port of a plain http:// endpoint; a connection it closes is probed
	// once for TLS (probeTLS), and speaksTLS holds the answer.
	tlsAddr   string
	probeOnce sync.Once
	speaksTLS bool
}

func newFailureLog(cfg Config) *failureLog {
	l := &failureLog{causes: map[string]*Failure{}}
	if one, https := cfg.oneHost(); one && !https {
		if u, err := cfg.signalURL(signal.Logs); err == nil {
			if parsed, err := url.Parse(u); err == nil {
				l.tlsAddr = parsed.Host
			}
		}
	}
	return l
}

// probeTLS reports whether addr completes a TLS handshake. A TLS server that gets plain HTTP
// often answers with an alert or a 400 and a reset that loses the answer; a closed connection
// on an http:// endpoint is therefore checked once this way before it is reported.
func probeTLS(addr string) bool {
	d := &net.Dialer{Timeout: time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a probe, no data sent
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

func (l *failureLog) record(sig signal.Signal, c failureCause) {
	if c.cause == "connection closed" && l.tlsAddr != "" {
		l.probeOnce.Do(func() { l.speaksTLS = probeTLS(l.tlsAddr) })
		if l.speaksTLS {
			c.cause, c.hint = "plain HTTP to a TLS server", hintPlainToTLS
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.causes[c.cause]
	if f == nil {
		f = &Failure{Cause: c.cause, FirstError: c.text, Hint: c.hint, Fatal: c.fatal}
		l.causes[c.cause] = f
		l.order = append(l.order, c.cause)
	}
	f.Count++
	if !slices.Contains(f.Signals, sig.String()) {
		f.Signals = append(f.Signals, sig.String())
	}
}

// list returns the causes, most frequent first.
func (l *failureLog) list() []Failure {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Failure, 0, len(l.order))
	for _, c := range l.order {
		f := *l.causes[c]
		f.Signals = slices.Clone(f.Signals)
		slices.Sort(f.Signals)
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Failure) int { return int(b.Count - a.Count) })
	return out
}

// Hints for the mistakes people make first.
const (
	hintBaseURL      = "the endpoint is the base URL, e.g. http://host:4318; the per-signal paths are added"
	hintPlainToTLS   = "the server speaks TLS: use https:// in the endpoint"
	hintTLSToPlain   = "the server speaks plain HTTP: use http:// in the endpoint (or --insecure, OTEL_EXPORTER_OTLP_INSECURE=true, for host:port)"
	hintRefused      = "nothing listens there: is the server up, and are the host and port right?"
	hintUntrusted    = "the server's certificate is not trusted: give its CA with --ca-file (OTEL_EXPORTER_OTLP_CERTIFICATE), or --insecure-skip-verify for a test server"
	hintOverloaded   = "the server sheds load: lower the rate or concurrency, or --retry N to retry as exporters do"
	hintAuth         = "the server wants credentials: --header Authorization=... (or OTEL_EXPORTER_OTLP_HEADERS)"
	hintTooLarge     = "the request is larger than the server takes: fewer --records per request"
	hintMediaType    = "the server does not take this encoding: try --protocol http/protobuf"
	hintTimeout      = "no answer within --timeout: the server is stalled or far slower than the load"
	hintNotGRPC      = "the server does not serve that OTLP/gRPC method: is the endpoint an OTLP/HTTP port (4318) rather than the gRPC one (4317)?"
	hintClosedEarly  = "the server closed the connection mid-request: is it a TLS port (use https://), or did it restart?"
	maxFailureText   = 300
	tlsAlertPrefix   = "\x15\x03" // a TLS alert record, what a TLS server sends to plain HTTP
	goPlainToTLSText = "HTTP request to an HTTPS server"
)

// classifyError names the cause of a transport error; all are fatal.
func classifyError(err error) failureCause {
	c := classifyTransport(err)
	c.fatal = true
	if len(c.text) > maxFailureText {
		c.text = c.text[:maxFailureText]
	}
	return c
}

func classifyTransport(err error) failureCause {
	text := err.Error()
	var rhe tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var tlsVerify *tls.CertificateVerificationError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, errNoAnswer) && strings.Contains(text, "connection refused"):
		return failureCause{cause: "connection refused", hint: hintRefused, text: text}
	case errors.As(err, &rhe), strings.Contains(text, "server gave HTTP response to HTTPS client"),
		errors.Is(err, errNoAnswer) && strings.Contains(text, "first record does not look like a TLS handshake"):
		return failureCause{cause: "TLS to a plain-HTTP server", hint: hintTLSToPlain, text: text}
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &tlsVerify):
		return failureCause{cause: "TLS certificate not trusted", hint: hintUntrusted, text: text}
	case errors.Is(err, errMalformed) && strings.Contains(text, tlsAlertPrefix):
		return failureCause{cause: "plain HTTP to a TLS server", hint: hintPlainToTLS, text: text}
	case errors.Is(err, errTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		return failureCause{cause: "timeout", hint: hintTimeout, text: text}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return failureCause{cause: "connection closed", hint: hintClosedEarly, text: text}
	}
	return failureCause{cause: "transport error", text: text}
}

// classifyStatus names the cause of a non-2xx answer. A gRPC answer is named by its code and
// judged by its HTTP equivalent (httpStatus): the codes the OTLP specification retries are
// not fatal, every other one is.
func classifyStatus(resp response, cfg Config) failureCause {
	cause := fmt.Sprintf("HTTP %d", resp.status)
	if resp.grpcCode > 0 {
		cause = "gRPC " + otlpgrpc.CodeName(codes.Code(resp.grpcCode-1))
	}
	text := cause
	if msg := responseText(resp); msg != "" {
		text += ": " + msg
	}
	if resp.grpcCode > 0 {
		return classifyGRPC(resp, cause, text)
	}
	hint := statusHint(resp.status)
	switch resp.status {
	case 400:
		if strings.Contains(string(resp.body), goPlainToTLSText) || strings.Contains(string(resp.body), "plain HTTP request was sent to HTTPS port") {
			return failureCause{"plain HTTP to a TLS server", hintPlainToTLS, text, true}
		}
	case 404:
		hint = hintBaseURL
		if u, err := url.Parse(cfg.Endpoint); err == nil && strings.Contains(u.Path, "/v1/") {
			hint += " (drop " + u.Path + " from the endpoint)"
		}
	case 415:
		hint = hintMediaType
	}
	fatal := resp.status >= 400 && resp.status < 500 && resp.status != 429
	return failureCause{cause, hint, text, fatal}
}

// classifyGRPC gives a gRPC answer that is not OK the hint of its HTTP equivalent.
func classifyGRPC(resp response, cause, text string) failureCause {
	hint := statusHint(resp.status)
	if resp.status == 501 { // Unimplemented
		hint = hintNotGRPC
	}
	return failureCause{cause, hint, text, !retryable(resp.status)}
}

// statusHint returns the hint HTTP and gRPC answers share for an error status (for gRPC, the
// code's HTTP equivalent), or "".
func statusHint(status int) string {
	switch status {
	case 401, 403:
		return hintAuth
	case 413:
		return hintTooLarge
	case 429, 502, 503, 504:
		return hintOverloaded
	}
	return ""
}

// responseText returns the message of an error answer: a google.rpc.Status message (field 2)
// for protobuf, else the start of the body as text.
func responseText(resp response) string {
	b := resp.body
	if !isJSON(resp.contentType) && strings.Contains(resp.contentType, "protobuf") {
		if msg, ok := statusMessage(b); ok {
			return msg
		}
	}
	s := strings.TrimSpace(string(b[:min(len(b), maxFailureText)]))
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// statusMessage returns field 2 (message) of a google.rpc.Status.
func statusMessage(b []byte) (string, bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		if num == 2 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			return string(v), m >= 0
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return "", false
		}
		b = b[m:]
	}
	return "", false
}
