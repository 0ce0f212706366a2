package h2grpc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Flow control windows this client announces. The stream window covers
// any answer below it without a WINDOW_UPDATE; the connection window is
// raised at once so that answers never wait for one (grpc-go's client does
// the same, with BDP estimation on top).
const (
	initialStreamWindow = 1 << 20
	initialConnWindow   = 16 << 20
	defaultWindow       = 65535 // RFC 9113 §6.9.2
	defaultMaxFrame     = 16384 // RFC 9113 §6.5.2
	maxStreamID         = 1<<31 - 1
	readBufferSize      = 32 << 10
)

// transport is one HTTP/2 connection. Its mutex guards the write buffer,
// the windows, the stream table and every stream's answer fields: callers
// append frames and the reader updates streams under it, and nobody holds
// it across a system call.
type transport struct {
	c  *Client
	nc net.Conn
	rw io.ReadWriter // nc's reads and writes (connIO)
	fr *http2.Framer // reads only, by the reader goroutine, from br
	br *bufio.Reader
	// hbuf holds a header frame's payload; contID is the stream whose
	// header block goes on in CONTINUATION frames (0: none). Reader's own.
	hbuf   []byte
	contID uint32
	// hdec decodes every header block in order (HPACK's dynamic table);
	// its emit function fills the answer of decoding, nil for a stream
	// already forgotten.
	hdec     *hpack.Decoder
	decoding *stream
	usable   atomic.Bool // takes new streams: not failed, no GOAWAY

	mu       sync.Mutex
	err      error    // why the connection ended; set once
	hdr      *headers // the request headers' HPACK state
	goaway   bool
	streams  map[uint32]*stream
	nextID   uint32
	active   int
	maxConc  int   // the server's MAX_CONCURRENT_STREAMS
	maxFrame int   // the server's MAX_FRAME_SIZE
	initWin  int64 // the server's INITIAL_WINDOW_SIZE
	sendWin  int64 // connection send window
	recvUsed int   // bytes received and not yet given back by WINDOW_UPDATE

	// wbuf collects frames; the caller that finds nobody flushing writes
	// it (and whatever others append meanwhile), swapping with spare.
	wbuf, spare []byte
	flushing    bool
	pingAcks    int // bytes of wbuf that are PING acks (flushControl)
	// writeDeadline is the connection's, moved by the flusher only.
	writeDeadline time.Time
	// wake is closed and replaced when a window grows, a stream ends or the
	// connection fails, if waiters > 0.
	wake    chan struct{}
	waiters int
}

// dial connects, exchanges the preface and SETTINGS, and waits for the
// server's SETTINGS so that its stream limit holds from the first call.
func dial(ctx context.Context, c *Client) (*transport, error) {
	d := net.Dialer{Timeout: c.cfg.Timeout}
	nc, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, err
	}
	t := &transport{
		c: c, nc: nc, streams: map[uint32]*stream{}, nextID: 1, maxConc: 1 << 30,
		maxFrame: defaultMaxFrame, initWin: defaultWindow, sendWin: defaultWindow,
		wake: make(chan struct{}),
	}
	t.rw = connIO(nc)
	t.hdr = newHeaders(c)
	t.br = bufio.NewReaderSize(t.rw, readBufferSize)
	t.fr = http2.NewFramer(io.Discard, t.br)
	t.fr.SetReuseFrames()
	t.fr.SetMaxReadFrameSize(defaultMaxFrame)
	t.hdec = hpack.NewDecoder(4096, t.emit)
	t.hdec.SetMaxStringLength(c.cfg.MaxRecvMsgSize)

	b := append(t.wbuf, http2.ClientPreface...)
	b = appendFrameHeader(b, 12, http2.FrameSettings, 0, 0)
	b = appendSetting(b, http2.SettingEnablePush, 0)
	b = appendSetting(b, http2.SettingInitialWindowSize, initialStreamWindow)
	b = appendWindowUpdate(b, 0, initialConnWindow-defaultWindow)
	deadline := time.Now().Add(c.cfg.Timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = nc.SetDeadline(deadline)
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return nil, fmt.Errorf("write preface: %w", err)
	}
	f, err := t.fr.ReadFrame()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("read server preface: %w", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		nc.Close()
		return nil, fmt.Errorf("read server preface: got a %v frame, want SETTINGS (is this an HTTP/2 server?)", f.Header().Type)
	}
	_ = nc.SetDeadline(time.Time{})
	t.mu.Lock()
	err = t.settingsLocked(sf)
	t.mu.Unlock()
	if err != nil {
		nc.Close()
		return nil, err
	}
	t.usable.Store(true)
	return t, nil
}

// close ends the connection; the reader then fails what is in flight.
func (t *transport) close() {
	t.usable.Store(false)
	_ = t.nc.Close()
}

// failLocked ends the connection with err and every stream on it without
// an answer's end: their callers see err (or UNAVAILABLE after headers).
func (t *transport) failLocked(err error) {
	if t.err != nil {
		return
	}
	t.err = err
	t.usable.Store(false)
	_ = t.nc.Close()
	for _, s := range t.streams {
		s.err = err
		t.endLocked(s)
	}
	t.wakeLocked()
}

// endLocked forgets s and wakes its caller. The caller reads s's answer
// without the lock once woken: the reader no longer finds it.
func (t *transport) endLocked(s *stream) {
	delete(t.streams, s.id)
	s.open = false
	t.active--
	if t.goaway && t.active == 0 && t.err == nil {
		t.err = errDrained
		_ = t.nc.Close()
	}
	t.wakeLocked()
	s.done <- struct{}{}
}

// errDrained ends a connection that got GOAWAY once its last stream ended.
var errDrained = errors.New("connection drained after GOAWAY")

func (t *transport) wakeLocked() {
	if t.waiters > 0 {
		close(t.wake)
		t.wake = make(chan struct{})
		t.waiters = 0
	}
}

// waitLocked waits, unlocked, for the next wakeLocked or the end of ctx.
func (t *transport) waitLocked(ctx context.Context) error {
	ch := t.wake
	t.waiters++
	t.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = ctx.Err()
	}
	t.mu.Lock()
	return err
}

// flushLocked writes the queued frames unless someone else is writing, in
// which case they will: concurrent callers' frames leave in one write.
func (t *transport) flushLocked() {
	if t.flushing {
		return
	}
	t.flushing = true
	for len(t.wbuf) > 0 && t.err == nil {
		buf := t.wbuf
		t.wbuf, t.pingAcks = t.spare[:0], 0
		t.mu.Unlock()
		// A server that stops reading must not hold a caller past its
		// timeout; moving the deadline only once half of it is gone keeps
		// the runtime's timer updates off most writes.
		if now := time.Now(); t.writeDeadline.Sub(now) < t.c.cfg.Timeout/2 {
			t.writeDeadline = now.Add(t.c.cfg.Timeout)
			_ = t.nc.SetWriteDeadline(t.writeDeadline)
		}
		_, err := t.rw.Write(buf)
		t.mu.Lock()
		t.spare = buf[:0]
		if err != nil {
			t.failLocked(fmt.Errorf("write: %w", err))
		}
	}
	t.wbuf, t.pingAcks = t.wbuf[:0], 0
	t.flushing = false
}

// open starts s on a new stream: waits for a stream slot, sends the
// headers and as much of the message as the windows allow, then the rest
// as they open. It returns an error when s could not be opened; once it
// is, its end comes through s.done.
func (t *transport) open(ctx context.Context, s *stream, method int, prefix *[5]byte, msg []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.err == nil && !t.goaway && t.active >= t.maxConc {
		if err := t.waitLocked(ctx); err != nil {
			return err
		}
	}
	switch {
	case t.err != nil:
		return t.err
	case t.goaway:
		return errGoAway
	}
	s.id = t.nextID
	t.nextID += 2
	if t.nextID > maxStreamID {
		t.goaway = true // no ids left: the next call dials anew
		t.usable.Store(false)
	}
	s.open, s.sendWin = true, t.initWin
	t.streams[s.id] = s
	t.active++
	t.appendHeadersLocked(s.id, t.hdr.block(t.c, method))
	total := len(prefix) + len(msg)
	for off := 0; ; {
		off = t.appendDataLocked(s, prefix, msg, off, total)
		t.flushLocked()
		if off == total || !s.open {
			return nil
		}
		if t.sendWin > 0 && s.sendWin > 0 {
			continue // a window opened while the lock was released to write
		}
		if err := t.waitLocked(ctx); err != nil {
			if s.open {
				s.err = err
				t.resetLocked(s, http2.ErrCodeCancel)
			}
			return nil // s ended: its caller sees the context's end
		}
	}
}

// errGoAway is the error of a call that found its connection draining;
// the caller retries it on a new connection.
var errGoAway = errors.New("connection going away")

// appendHeadersLocked queues HEADERS (and CONTINUATION beyond the server's
// frame size) with block.
func (t *transport) appendHeadersLocked(id uint32, block []byte) {
	typ := http2.FrameHeaders
	for {
		n := min(len(block), t.maxFrame)
		var flags http2.Flags
		if n == len(block) {
			flags = http2.FlagHeadersEndHeaders
		}
		t.wbuf = appendFrameHeader(t.wbuf, n, typ, flags, id)
		t.wbuf = append(t.wbuf, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return
		}
		typ = http2.FrameContinuation
	}
}

// appendDataLocked queues DATA frames carrying prefix+msg from off on, as
// far as the windows allow, and returns the new offset. The last frame
// ends the stream.
func (t *transport) appendDataLocked(s *stream, prefix *[5]byte, msg []byte, off, total int) int {
	for off < total && s.open {
		n := int(min(int64(total-off), int64(t.maxFrame), t.sendWin, s.sendWin))
		if n <= 0 {
			break
		}
		var flags http2.Flags
		if off+n == total {
			flags = http2.FlagDataEndStream
		}
		t.wbuf = appendFrameHeader(t.wbuf, n, http2.FrameData, flags, s.id)
		end := off + n
		if off < len(prefix) {
			t.wbuf = append(t.wbuf, prefix[off:min(end, len(prefix))]...)
		}
		if end > len(prefix) {
			t.wbuf = append(t.wbuf, msg[max(off-len(prefix), 0):end-len(prefix)]...)
		}
		t.sendWin -= int64(n)
		s.sendWin -= int64(n)
		off = end
	}
	return off
}

// resetLocked cancels s with RST_STREAM and ends it.
func (t *transport) resetLocked(s *stream, code http2.ErrCode) {
	t.wbuf = appendFrameHeader(t.wbuf, 4, http2.FrameRSTStream, 0, s.id)
	t.wbuf = binary.BigEndian.AppendUint32(t.wbuf, uint32(code))
	t.endLocked(s)
	t.flushLocked()
}

func appendFrameHeader(b []byte, length int, typ http2.FrameType, flags http2.Flags, id uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), byte(typ), byte(flags),
		byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
}

func appendSetting(b []byte, id http2.SettingID, v uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(id))
	return binary.BigEndian.AppendUint32(b, v)
}

func appendWindowUpdate(b []byte, id uint32, inc uint32) []byte {
	b = appendFrameHeader(b, 4, http2.FrameWindowUpdate, 0, id)
	return binary.BigEndian.AppendUint32(b, inc)
}
