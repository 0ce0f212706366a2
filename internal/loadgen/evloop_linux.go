package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// The closed model on Linux runs its connections from a few goroutines
// that each drive many non-blocking sockets with epoll, as wrk does, instead
// of one goroutine per connection. Profiles of the goroutine sender showed
// most of its CPU in the netpoller and scheduler: a read that returns EAGAIN
// after every send, a goroutine park and unpark, futex wake-ups of idle Ps.
// Here a send is one writev and a response one read, and one epoll_wait
// serves every connection that became ready.

const evSupported = true

type evState uint8

const (
	evIdle evState = iota
	evConnecting
	evWriting
	evReading
)

// maxResponseBytes bounds the raw response bytes buffered per connection.
const maxResponseBytes = 4 << 20

type evConn struct {
	idx     int32
	fd      int
	state   evState
	wantOut bool // EPOLLOUT in the interest set
	eof     bool
	p       *otlpgen.Payload
	bodies  bodyBuffers // p's patched (and compressed) body, when the run patches
	head    []byte
	size    int // body bytes
	sent    time.Time
	iovArr  [2][]byte
	iov     [][]byte
	vecs    [2]unix.Iovec
	in      []byte
	rd      bytes.Reader
	br      *bufio.Reader
	body    bytes.Buffer
}

type evLoop struct {
	r        *runner
	s        *h1Sender
	ctx      context.Context // cancellation aborts requests in flight
	stopCtx  context.Context // ends the issuing of new requests
	epfd     int
	sa       unix.Sockaddr
	family   int
	conns    []*evConn
	inFlight int
}

// connsPerLoop: each loop drives up to this many connections. Fewer loops
// batch more ready connections per epoll_wait: with 8 connections on 2
// cores, one loop measured 8-10 µs CPU per request against 12-17 µs for two.
const connsPerLoop = 64

// eventLoops returns how many epoll loops drive n connections.
func eventLoops(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), (n+connsPerLoop-1)/connsPerLoop))
}

func newEvLoop(ctx, stopCtx context.Context, r *runner, s *h1Sender, n int) (*evLoop, error) {
	addr, err := net.ResolveTCPAddr("tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", s.addr, err)
	}
	l := &evLoop{r: r, s: s, ctx: ctx, stopCtx: stopCtx}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], addr.IP.To16())
		l.sa, l.family = sa, unix.AF_INET6
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	for i := range n {
		l.conns = append(l.conns, &evConn{idx: int32(i), fd: -1, br: bufio.NewReaderSize(nil, 16<<10)})
	}
	return l, nil
}

// run drives the connections until no request is left to send and none is
// in flight, or ctx is canceled.
func (l *evLoop) run() {
	defer unix.Close(l.epfd)
	for _, c := range l.conns {
		l.issue(c)
	}
	events := make([]unix.EpollEvent, len(l.conns))
	lastSweep := time.Now()
	for l.inFlight > 0 {
		if l.ctx.Err() != nil {
			for _, c := range l.conns {
				if c.state != evIdle {
					l.complete(c, response{}, l.ctx.Err())
				}
			}
			break
		}
		n, err := pollNow(l.epfd, events)
		if err == nil && n == 0 {
			n, err = pollWait(l.epfd, events, 20)
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			for _, c := range l.conns {
				if c.state != evIdle {
					l.complete(c, response{}, fmt.Errorf("epoll_wait: %w", err))
				}
			}
			break
		}
		for i := range max(n, 0) {
			c := l.conns[events[i].Pad]
			ev := events[i].Events
			switch c.state {
			case evConnecting:
				l.connected(c)
			case evWriting:
				if ev&unix.EPOLLIN != 0 { // answered before the body was sent (413)
					l.earlyAnswer(c)
				} else {
					l.write(c)
				}
			case evReading:
				if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 {
					l.read(c)
				}
			}
			if c.state == evIdle {
				l.issue(c)
			}
		}
		if now := time.Now(); now.Sub(lastSweep) > 10*time.Millisecond {
			lastSweep = now
			for _, c := range l.conns {
				if c.state != evIdle && now.Sub(c.sent) > l.s.timeout {
					l.complete(c, response{}, errTimeout)
					l.issue(c)
				}
			}
		}
	}
	for _, c := range l.conns {
		l.closeConn(c)
	}
}

// issue starts the next request on c, if there is one.
func (l *evLoop) issue(c *evConn) {
	r := l.r
	for l.stopCtx.Err() == nil {
		n := r.next.Add(1) - 1
		if r.cfg.Requests > 0 && n >= r.cfg.Requests {
			break
		}
		c.sent = time.Now()
		r.cfg.firstSend.mark(c.sent)
		c.in, c.eof = c.in[:0], false
		p, body, err := r.prepare(n, &c.bodies, c.sent)
		c.p, c.size = p, len(body)
		if err != nil {
			r.recordAttempt(l.ctx, p, 0, response{}, err, false, true)
			continue
		}
		c.head = l.s.appendHead(c.head[:0], p, len(body))
		c.iovArr = [2][]byte{c.head, body}
		c.iov = c.iovArr[:]
		l.inFlight++
		if c.fd < 0 {
			if err := l.dial(c); err != nil {
				l.complete(c, response{}, err)
				continue
			}
			return // wait for the connection to complete
		}
		c.state = evWriting
		l.write(c)
		if c.state != evIdle {
			return
		}
	}
	l.closeConn(c)
}

func (l *evLoop) dial(c *evConn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, l.sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return fmt.Errorf("connect: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Pad: c.idx}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	c.fd, c.state, c.wantOut = fd, evConnecting, true
	return nil
}

func (l *evLoop) connected(c *evConn) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err != nil {
		l.complete(c, response{}, fmt.Errorf("connect: %w", err))
		return
	}
	c.state = evWriting
	l.write(c)
}

// setOut adds or removes EPOLLOUT from c's interest set.
func (l *evLoop) setOut(c *evConn, out bool) error {
	if c.wantOut == out {
		return nil
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Pad: c.idx}
	if out {
		ev.Events |= unix.EPOLLOUT
	}
	c.wantOut = out
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev)
}

func (l *evLoop) write(c *evConn) {
	for len(c.iov) > 0 {
		n, err := rawWritev(c.fd, c.iov, &c.vecs)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			if err := l.setOut(c, true); err != nil {
				l.complete(c, response{}, err)
			}
			return // wait for EPOLLOUT
		}
		if err != nil {
			// A server may answer before reading the whole body (413
			// Payload Too Large) and close: read what it sent, if anything.
			c.iov = nil
			c.state = evReading
			c.eof = true // nothing more will come after this read
			l.readFinal(c, fmt.Errorf("writev: %w", err))
			return
		}
		for n > 0 {
			if n >= len(c.iov[0]) {
				n -= len(c.iov[0])
				c.iov = c.iov[1:]
			} else {
				c.iov[0] = c.iov[0][n:]
				n = 0
			}
		}
	}
	if err := l.setOut(c, false); err != nil {
		l.complete(c, response{}, err)
		return
	}
	c.state = evReading
}

// read takes what the socket has (one read per readiness event; epoll is
// level-triggered, so more data reports again) and completes the request
// once a whole response has arrived.
func (l *evLoop) read(c *evConn) {
	if cap(c.in)-len(c.in) < 4096 {
		if cap(c.in) >= maxResponseBytes {
			l.complete(c, response{}, fmt.Errorf("%w: response over %d bytes", errMalformed, maxResponseBytes))
			return
		}
		grown := make([]byte, len(c.in), max(2*cap(c.in), 16<<10))
		copy(grown, c.in)
		c.in = grown
	}
	n, err := rawRead(c.fd, c.in[len(c.in):cap(c.in)])
	switch {
	case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
		return
	case err != nil:
		l.complete(c, response{}, fmt.Errorf("read: %w", err))
		return
	case n == 0:
		c.eof = true
	default:
		c.in = c.in[:len(c.in)+n]
	}
	c.rd.Reset(c.in)
	c.br.Reset(&c.rd)
	resp, keepAlive, err := readResponse(c.br, &c.body)
	switch {
	case err == nil && (keepAlive || c.eof):
		l.complete(c, resp, nil)
		if !keepAlive {
			l.closeConn(c)
		}
	case err == nil || errors.Is(err, io.ErrUnexpectedEOF):
		if c.eof {
			l.complete(c, response{}, io.ErrUnexpectedEOF)
		} // else: wait for the rest (or for the close that ends the body)
	default:
		l.complete(c, response{}, err)
	}
}

// earlyAnswer handles a response that arrives while the body is still being
// written: a complete one ends the request (the connection cannot carry
// another); a partial one is kept in c.in until it completes.
func (l *evLoop) earlyAnswer(c *evConn) {
	c.state = evReading
	l.read(c)
	if c.state == evReading { // not complete yet: go on writing
		c.state = evWriting
		l.write(c)
		return
	}
	l.closeConn(c)
}

// readFinal reads what the socket still holds after a failed write and
// completes the request with the response found there, or with werr.
func (l *evLoop) readFinal(c *evConn, werr error) {
	for len(c.in) < maxResponseBytes {
		if cap(c.in)-len(c.in) < 4096 {
			grown := make([]byte, len(c.in), max(2*cap(c.in), 16<<10))
			copy(grown, c.in)
			c.in = grown
		}
		n, err := unix.Read(c.fd, c.in[len(c.in):cap(c.in)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		c.in = c.in[:len(c.in)+n]
	}
	c.rd.Reset(c.in)
	c.br.Reset(&c.rd)
	resp, _, err := readResponse(c.br, &c.body)
	if err != nil {
		l.complete(c, response{}, werr)
		return
	}
	l.complete(c, resp, nil)
	l.closeConn(c)
}

// complete accounts the request in flight on c; a failed connection is
// closed so that the next request dials a new one.
func (l *evLoop) complete(c *evConn, resp response, err error) {
	if l.r.recordAttempt(l.ctx, c.p, c.size, resp, err, false, true) {
		d := time.Since(c.sent)
		l.r.acc[c.p.Signal.Index()].recordLatency(d, d, false)
	}
	if err != nil {
		l.closeConn(c)
	}
	c.state = evIdle
	l.inFlight--
}

func (l *evLoop) closeConn(c *evConn) {
	if c.fd >= 0 {
		unix.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
	c.state, c.wantOut = evIdle, false
}
