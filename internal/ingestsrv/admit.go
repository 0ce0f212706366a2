package ingestsrv

import (
	"bytes"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
)

// Connection admission. netutil.LimitListener stopped calling Accept at the
// limit, so under 10x overload the excess clients waited in the kernel's
// accept backlog and, once it was full, saw connect timeouts (5,119
// transport errors in one 15 s run, docs/benchmarks/serve.md) instead of the
// 503 + Retry-After the OTLP spec asks for. admitListener keeps accepting:
// up to the limit a connection goes to net/http; beyond it a small, bounded
// rejecter answers a canned 503 and closes; beyond the rejecter's own bound
// the connection is closed at once.
const (
	// rejectHeadTimeout bounds the wait for the request head of a rejected
	// connection; a client that has not sent one by then is just closed.
	// Under 10x overload on 2 shared cores clients were often over 1 s late
	// (1,375 closed unanswered in a 20 s run at load average 9.6); the
	// wait costs a parked goroutine, bounded by MaxRejecting.
	rejectHeadTimeout = 3 * time.Second
	// rejectDrainTimeout and rejectDrainBytes bound the reading of what the
	// client still sends (its body) after the 503: reading it keeps the
	// kernel from answering the client's unread data with an RST that
	// would destroy the 503 before the client reads it.
	rejectDrainTimeout = time.Second
	rejectDrainBytes   = 1 << 20
	// rejectBufBytes is each rejecter's read buffer: enough for the request
	// head of OTLP exporters (a few hundred bytes); a longer head is
	// answered anyway and drained like a body.
	rejectBufBytes = 2 << 10
)

// rejectOutcome is what became of a connection past the limit.
type rejectOutcome int

const (
	rejectAnswered rejectOutcome = iota // 503 written
	rejectRefused                       // closed at once: every rejecter busy
	rejectIdle                          // closed unanswered: no request came, or the client left
)

// admitListener wraps the server's listener; see the constants above.
type admitListener struct {
	net.Listener
	slots     chan struct{} // one per admitted connection
	rejecters chan struct{} // one per connection being answered 503
	sources   *sourceCounts
	onReject  func(o rejectOutcome, perSource bool)
	// Canned answers (read-only): past MaxConns, and past the per-source cap.
	resp, respSource map[otlpcodec.Encoding][]byte
	bufs             sync.Pool

	mu     sync.Mutex
	closed bool
	active map[net.Conn]struct{} // connections being rejected
	wg     sync.WaitGroup
}

// newAdmitListener admits maxConns connections at a time, at most
// maxPerSource of them from one source address, and answers at most
// maxRejecting excess connections at a time with 503. onReject is called
// once per excess connection with what became of it and whether it was
// refused for its source's cap.
func newAdmitListener(ln net.Listener, maxConns, maxPerSource, maxRejecting int, onReject func(rejectOutcome, bool)) *admitListener {
	canned := func(msg string) map[otlpcodec.Encoding][]byte {
		return map[otlpcodec.Encoding][]byte{
			otlpcodec.EncodingProto: canned503(otlpcodec.EncodingProto, msg),
			otlpcodec.EncodingJSON:  canned503(otlpcodec.EncodingJSON, msg),
		}
	}
	return &admitListener{
		Listener:   ln,
		slots:      make(chan struct{}, maxConns),
		rejecters:  make(chan struct{}, maxRejecting),
		sources:    &sourceCounts{max: maxPerSource, n: map[netip.Addr]int{}},
		onReject:   onReject,
		resp:       canned("too many connections, retry later"),
		respSource: canned("too many connections from this address, retry later"),
		active:     map[net.Conn]struct{}{},
		bufs:       sync.Pool{New: func() any { b := make([]byte, rejectBufBytes); return &b }},
	}
}

// share makes l count its connections against the limits of other: the same
// MaxConns slots and the same per-source counts (the gRPC listener shares the
// HTTP one's).
func (l *admitListener) share(other *admitListener) {
	l.slots, l.sources = other.slots, other.sources
}

// Accept returns the next connection admitted under the limits; excess
// connections are handed to a rejecter (or closed) without returning.
func (l *admitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
		default:
			l.reject(c, false)
			continue
		}
		src, ok := sourceOf(c)
		if ok && !l.sources.take(src) {
			<-l.slots
			l.reject(c, true)
			continue
		}
		return &admittedConn{Conn: c, l: l, src: src, counted: ok}, nil
	}
}

// sourceOf is c's source IP address (IPv4-mapped IPv6 unmapped), if it has one.
func sourceOf(c net.Conn) (netip.Addr, bool) {
	tcp, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	return tcp.AddrPort().Addr().Unmap(), true
}

// sourceCounts counts admitted connections by source address, up to max each.
type sourceCounts struct {
	max int
	mu  sync.Mutex
	n   map[netip.Addr]int
}

// take counts one more connection from src, unless src is at its cap.
func (c *sourceCounts) take(src netip.Addr) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[src] >= c.max {
		return false
	}
	c.n[src]++
	return true
}

func (c *sourceCounts) give(src netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[src] <= 1 {
		delete(c.n, src)
		return
	}
	c.n[src]--
}

// reject starts a rejecter for c, or closes c at once past the bound.
// perSource: c is refused for its source address's cap, not MaxConns.
func (l *admitListener) reject(c net.Conn, perSource bool) {
	select {
	case l.rejecters <- struct{}{}:
	default:
		l.onReject(rejectRefused, perSource)
		c.Close()
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.rejecters
		c.Close()
		return
	}
	l.active[c] = struct{}{}
	l.wg.Add(1)
	l.mu.Unlock()
	canned := l.resp
	if perSource {
		canned = l.respSource
	}
	go func() {
		defer l.wg.Done()
		outcome := l.answer503(c, canned)
		l.mu.Lock()
		delete(l.active, c)
		l.mu.Unlock()
		c.Close()
		<-l.rejecters
		l.onReject(outcome, perSource)
	}()
}

// answer503 reads the request head, writes the canned 503 (from canned, by
// encoding) and reads the rest of what the client sends, so the close is a
// FIN, not an RST. It reports what became of the connection.
func (l *admitListener) answer503(c net.Conn, canned map[otlpcodec.Encoding][]byte) rejectOutcome {
	_ = c.SetDeadline(time.Now().Add(rejectHeadTimeout))
	// Under overload the client often runs late too: hundreds of accepted
	// connections may wait for their request for a while. Wait for it
	// without holding a buffer, so a waiting rejecter is just a parked
	// goroutine.
	if !waitReadable(c) {
		return rejectIdle
	}
	bp := l.bufs.Get().(*[]byte)
	defer l.bufs.Put(bp)
	buf := *bp
	n, end := 0, -1
	for n < len(buf) && end < 0 {
		m, err := c.Read(buf[n:])
		n += m
		end = bytes.Index(buf[:n], []byte("\r\n\r\n"))
		if err != nil && end < 0 {
			if n == 0 {
				return rejectIdle // no request: nothing to answer
			}
			break // a partial head by the deadline: answer anyway
		}
	}
	json, length := false, int64(-1)
	if end >= 0 {
		json, length = parseHead(buf[:end])
	}
	resp := canned[otlpcodec.EncodingProto]
	if json {
		resp = canned[otlpcodec.EncodingJSON]
	}
	_ = c.SetDeadline(time.Now().Add(rejectDrainTimeout))
	if _, err := c.Write(resp); err != nil {
		return rejectIdle // the client is gone
	}
	if end >= 0 && length >= 0 && length <= rejectDrainBytes {
		// The usual case: the body's length is known, so read exactly it
		// and close at once instead of waiting for the client's FIN.
		for left := length - int64(n-end-4); left > 0; {
			m, err := c.Read(buf[:min(left, int64(len(buf)))])
			left -= int64(m)
			if err != nil {
				break
			}
		}
		return rejectAnswered
	}
	// Chunked, huge or unparsed: half-close and drain until the client
	// closes, within the bounds.
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	for drained := 0; drained < rejectDrainBytes; {
		m, err := c.Read(buf)
		drained += m
		if err != nil {
			break
		}
	}
	return rejectAnswered
}

// parseHead reads what the rejecter needs from a request head: whether the
// body is OTLP-JSON (so the 503's google.rpc.Status matches) and its
// Content-Length (-1 when absent, invalid or chunked).
func parseHead(head []byte) (json bool, length int64) {
	length = -1
	chunked := false
	for line := range bytes.SplitSeq(head, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		k, v = bytes.TrimSpace(k), bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Type")):
			enc, err := otlpcodec.ParseContentType(string(v))
			json = err == nil && enc == otlpcodec.EncodingJSON
		case bytes.EqualFold(k, []byte("Content-Length")):
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n >= 0 {
				length = n
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = true
		}
	}
	if chunked {
		length = -1
	}
	return json, length
}

// Close closes the listener and cuts short every rejecter (their
// connections' deadlines move to now); wait waits for them.
func (l *admitListener) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.active {
		_ = c.SetDeadline(time.Now())
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// wait returns once every rejecter has finished (call after Close).
func (l *admitListener) wait() { l.wg.Wait() }

// admittedConn gives its slot and its source's count back when closed (once).
type admittedConn struct {
	net.Conn
	l       *admitListener
	src     netip.Addr
	counted bool // src was counted
	once    sync.Once
}

func (c *admittedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		if c.counted {
			c.l.sources.give(c.src)
		}
		<-c.l.slots
	})
	return err
}

// canned503 builds the rejecter's answer: 503, Retry-After, Connection:
// close and a google.rpc.Status UNAVAILABLE body saying msg in enc.
func canned503(enc otlpcodec.Encoding, msg string) []byte {
	body := otlpcodec.Status(enc, otlpcodec.CodeUnavailable, msg)
	head := "HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: " + enc.ContentType() + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Retry-After: " + strconv.Itoa(DefaultRetryAfter) + "\r\n" +
		"Connection: close\r\n\r\n"
	return append([]byte(head), body...)
}
