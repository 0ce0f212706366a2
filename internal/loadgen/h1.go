package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// h1Sender speaks just enough HTTP/1.1 to post pre-encoded payloads over
// plain-TCP keep-alive connections, one per worker. Each payload's request
// head (request line and headers, Content-Length included) is built once,
// and a send is one writev of head and body plus one read of the answer.
//
// Why not net/http: profiling `otelbench load` against a discarding sink
// showed net/http's client costing about 8× wrk's CPU per request (request
// and header allocation, the persistConn reader/writer goroutine handoffs,
// MIME header parsing, copying the body through bufio). The generator must
// not be the bottleneck, so endpoints on one host use this sender, over TLS for
// https://; endpoints on several hosts use the tuned net/http Transport
// (sender.go).
type h1Sender struct {
	addr    string
	tls     *tls.Config // nil for http://
	timeout time.Duration
	// heads holds each payload's request head up to, not including, its Content-Length
	// (appendHead ends it): a compressed body's length changes from send to send.
	heads map[*otlpgen.Payload][]byte // read-only after newH1Sender
}

// newH1Sender prepares the request heads of every payload; every signal's URL has the same
// scheme and host (Config.oneHost).
func newH1Sender(cfg Config, pool *otlpgen.Pool) (*h1Sender, error) {
	s := &h1Sender{timeout: cfg.Timeout, heads: map[*otlpgen.Payload][]byte{}}
	for _, sig := range signal.All() {
		raw, err := cfg.signalURL(sig)
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("parse endpoint: %w", err)
		}
		if s.addr == "" {
			s.addr = u.Host
			if u.Port() == "" {
				port := "80"
				if u.Scheme == "https" {
					port = "443"
				}
				s.addr = net.JoinHostPort(u.Hostname(), port)
			}
			if u.Scheme == "https" {
				if s.tls, err = cfg.TLS.clientConfig(u.Hostname()); err != nil {
					return nil, err
				}
			}
		}
		extra := cfg.headersFor(sig)
		if extra.Get("User-Agent") == "" {
			extra.Set("User-Agent", userAgent)
		}
		ps := pool.Payloads(sig)
		for i := range ps {
			p := &ps[i]
			var b bytes.Buffer
			fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n", u.RequestURI(), u.Host, p.ContentType)
			if p.ContentEncoding != "" {
				fmt.Fprintf(&b, "Content-Encoding: %s\r\n", p.ContentEncoding)
			}
			if err := extra.Write(&b); err != nil {
				return nil, fmt.Errorf("build request head: %w", err)
			}
			b.WriteString("Content-Length: ")
			s.heads[p] = b.Bytes()
		}
	}
	return s, nil
}

// userAgent is the User-Agent of every request, unless a header sets another.
const userAgent = "otelbench-load/2"

// appendHead appends p's request head for a body of n bytes to dst.
func (s *h1Sender) appendHead(dst []byte, p *otlpgen.Payload, n int) []byte {
	dst = append(dst, s.heads[p]...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// h1Conn is one worker's connection; it is not safe for concurrent use.
type h1Conn struct {
	s         *h1Sender
	ctx       context.Context
	conn      net.Conn
	br        *bufio.Reader
	stopWatch func() bool
	deadline  time.Time // the connection's current I/O deadline
	head      []byte
	bufs      [2][]byte
	iov       net.Buffers // iov aliases bufs; a field so WriteTo does not allocate
}

func (s *h1Sender) conn(ctx context.Context) *h1Conn {
	return &h1Conn{s: s, ctx: ctx}
}

func (c *h1Conn) dial() error {
	d := net.Dialer{Timeout: c.s.timeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(c.ctx, "tcp", c.s.addr)
	if err != nil {
		return err
	}
	if c.s.tls != nil {
		tc := tls.Client(conn, c.s.tls)
		hctx, cancel := context.WithTimeout(c.ctx, c.s.timeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			return fmt.Errorf("tls handshake: %w", err)
		}
		conn = tc
	}
	c.conn = conn
	c.deadline = time.Time{}
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 16<<10)
	} else {
		c.br.Reset(conn)
	}
	// Cancellation (Ctrl-C) aborts the request in flight by expiring the
	// deadline; registered once per connection, not per request.
	c.stopWatch = context.AfterFunc(c.ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	return nil
}

func (c *h1Conn) close() {
	if c.conn != nil {
		c.stopWatch()
		_ = c.conn.Close()
		c.conn = nil
	}
}

// Transport errors the senders make themselves.
var (
	// errMalformed marks a response that is not HTTP/1.x.
	errMalformed = errors.New("malformed HTTP response")
	// errTimeout is the transport error of a request past Config.Timeout (epoll loop).
	errTimeout = errors.New("request timed out")
)

// send posts p and reads the response, keeping at most DefaultMaxResponse
// bytes of its body in buf. On any error the connection is closed (the next
// send dials a new one); a non-nil error means no complete HTTP response.
func (c *h1Conn) send(_ context.Context, p *otlpgen.Payload, body []byte, buf *bytes.Buffer) (response, error) {
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return response{}, err
		}
	}
	// Moving a deadline costs a runtime timer update; profiles showed it per
	// request, so the deadline moves only when less than Timeout is left,
	// to 1.5×Timeout ahead: each request gets between Timeout and 1.5×Timeout.
	if now := time.Now(); c.deadline.Sub(now) < c.s.timeout {
		c.deadline = now.Add(c.s.timeout + c.s.timeout/2)
		if err := c.conn.SetDeadline(c.deadline); err != nil {
			c.close()
			return response{}, err
		}
		if err := c.ctx.Err(); err != nil { // canceled before the deadline was set
			c.close()
			return response{}, err
		}
	}
	c.head = c.s.appendHead(c.head[:0], p, len(body))
	c.bufs = [2][]byte{c.head, body}
	c.iov = c.bufs[:]
	if _, err := c.iov.WriteTo(c.conn); err != nil {
		// A server may answer before reading the whole body (413 Payload
		// Too Large) and close: the write fails, but the answer is there.
		resp, _, rerr := readResponse(c.br, buf)
		c.close()
		if rerr == nil {
			return resp, nil
		}
		return response{}, err
	}
	resp, keepAlive, err := readResponse(c.br, buf)
	if err != nil || !keepAlive {
		c.close()
	}
	return resp, err
}

// readResponse reads one HTTP/1.x response (skipping 1xx interim ones) and
// reports whether the connection may be reused.
func readResponse(br *bufio.Reader, buf *bytes.Buffer) (resp response, keepAlive bool, err error) {
	for {
		line, err := readLine(br)
		if err != nil {
			return resp, false, err
		}
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return resp, false, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		keepAlive = line[7] == '1'
		resp.status, err = strconv.Atoi(string(line[9:12]))
		if err != nil || resp.status < 100 {
			return resp, false, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		contentLength, chunked := int64(-1), false
		for {
			line, err := readLine(br)
			if err != nil {
				return resp, false, err
			}
			if len(line) == 0 {
				break
			}
			k, v, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				return resp, false, fmt.Errorf("%w: header line %q", errMalformed, line)
			}
			v = bytes.TrimSpace(v)
			switch {
			case asciiEqualFold(k, "content-length"):
				contentLength, err = strconv.ParseInt(string(v), 10, 64)
				if err != nil || contentLength < 0 {
					return resp, false, fmt.Errorf("%w: content-length %q", errMalformed, v)
				}
			case asciiEqualFold(k, "transfer-encoding"):
				chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
			case asciiEqualFold(k, "connection"):
				if asciiEqualFold(v, "close") {
					keepAlive = false
				} else if asciiEqualFold(v, "keep-alive") {
					keepAlive = true
				}
			case asciiEqualFold(k, "content-type"):
				resp.contentType = internContentType(v)
			case asciiEqualFold(k, "retry-after"):
				resp.retryAfter = string(v)
			}
		}
		if resp.status < 200 { // 100 Continue, 103 Early Hints: the real answer follows
			continue
		}
		buf.Reset()
		switch {
		case resp.status == http.StatusNoContent || resp.status == http.StatusNotModified:
		case chunked:
			err = readChunked(br, buf)
		case contentLength >= 0:
			err = readBody(br, buf, contentLength)
		default: // body until the server closes
			err = readBody(br, buf, -1)
			keepAlive = false
		}
		resp.body = buf.Bytes()
		return resp, keepAlive && err == nil, err
	}
}

// readLine returns one CRLF- or LF-terminated line without its terminator;
// the slice is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: header line longer than %d bytes", errMalformed, br.Size())
		}
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readBody reads n bytes (n < 0: until EOF), keeping at most
// DefaultMaxResponse of them in buf.
func readBody(br *bufio.Reader, buf *bytes.Buffer, n int64) error {
	if n < 0 {
		_, err := buf.ReadFrom(io.LimitReader(br, DefaultMaxResponse))
		if err == nil {
			_, err = io.Copy(io.Discard, br)
		}
		return err
	}
	keep := min(n, DefaultMaxResponse-int64(buf.Len()))
	if keep > 0 {
		if _, err := io.CopyN(buf, br, keep); err != nil {
			return unexpectedEOF(err)
		}
	}
	if rest := n - max(keep, 0); rest > 0 {
		if _, err := br.Discard(int(rest)); err != nil {
			return unexpectedEOF(err)
		}
	}
	return nil
}

// readChunked reads a chunked body and its trailers.
func readChunked(br *bufio.Reader, buf *bytes.Buffer) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			for { // trailers end with an empty line
				line, err := readLine(br)
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if err := readBody(br, buf, n); err != nil {
			return err
		}
		if line, err := readLine(br); err != nil || len(line) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// asciiEqualFold compares b with the lowercase ASCII string s, ignoring case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// internContentType avoids allocating the two content types OTLP servers send.
func internContentType(v []byte) string {
	switch string(v) { // no allocation: the compiler optimizes string(b) in a switch
	case "application/x-protobuf":
		return "application/x-protobuf"
	case "application/json":
		return "application/json"
	}
	return string(v)
}
