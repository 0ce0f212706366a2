package h2grpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// readLoop reads frames until the connection ends, then fails the streams
// left. It is the transport's only reader.
func (t *transport) readLoop() {
	for {
		err := t.readFrame()
		if se, ok := err.(http2.StreamError); ok { // as the Framer returns it
			t.mu.Lock()
			if s := t.streams[se.StreamID]; s != nil {
				s.err = fmt.Errorf("stream error: %w", se)
				t.resetLocked(s, se.Code)
			}
			t.mu.Unlock()
			continue
		}
		if err != nil {
			t.mu.Lock()
			t.failLocked(err)
			t.mu.Unlock()
			return
		}
		if t.frameBuffered() {
			continue // answer it together with this one
		}
		t.flushControl()
	}
}

// frameHeaderLen is an HTTP/2 frame header's length (RFC 9113 §4.1).
const frameHeaderLen = 9

// frameBuffered reports whether a whole frame waits in the read buffer, so
// that the next read will not block.
func (t *transport) frameBuffered() bool {
	if t.br.Buffered() < frameHeaderLen {
		return false // Peek would read, and block
	}
	h, err := t.br.Peek(frameHeaderLen)
	if err != nil {
		return false
	}
	n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	return t.br.Buffered() >= frameHeaderLen+n
}

// flushControl writes what the reader queued (PING and SETTINGS acks,
// WINDOW_UPDATEs) before it blocks on the next read. grpc-go's server
// pings for every request it reads (BDP estimation), before it answers,
// and a write for each ack costs the client a system call and the server a
// wakeup. So acks alone wait while a stream is open: its answer wakes its
// caller, whose next request carries them; the reader yields once for
// that caller before it writes them itself. A stream ends by its answer,
// a reset or its caller's deadline (every call of load has one), so no ack
// waits longer than a call. WINDOW_UPDATEs and SETTINGS acks never wait: a
// server may hold an answer for them.
func (t *transport) flushControl() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.wbuf) == 0 || t.flushing || t.active > 0 && len(t.wbuf) == t.pingAcks {
		return
	}
	t.mu.Unlock()
	runtime.Gosched()
	t.mu.Lock()
	t.flushLocked()
}

// readFrame reads and handles one frame. Header blocks are read here
// rather than by the Framer, which allocates a frame for each: two per call.
func (t *transport) readFrame() error {
	fh, err := t.fr.ReadFrameHeader()
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if fh.Type == http2.FrameHeaders || fh.Type == http2.FrameContinuation {
		return t.readHeaders(fh)
	}
	if t.contID != 0 {
		return fmt.Errorf("read: %v frame inside a header block (PROTOCOL_ERROR)", fh.Type)
	}
	if fh.Type == http2.FrameWindowUpdate && fh.Length == 4 {
		return t.readWindowUpdate(fh)
	}
	f, err := t.fr.ReadFrameForHeader(fh)
	if err != nil {
		if _, ok := err.(http2.StreamError); ok {
			return err
		}
		return fmt.Errorf("read: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handleLocked(f)
}

// readWindowUpdate reads a WINDOW_UPDATE frame, which grpc-go's server
// sends for every 16 KiB or so it reads: the Framer would allocate each.
func (t *transport) readWindowUpdate(fh http2.FrameHeader) error {
	p := t.hbuf[:0]
	if cap(p) < 4 {
		p = make([]byte, 4, defaultMaxFrame)
		t.hbuf = p
	}
	p = p[:4]
	if _, err := io.ReadFull(t.br, p); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	inc := binary.BigEndian.Uint32(p) & (1<<31 - 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if inc == 0 {
		if fh.StreamID == 0 {
			return errors.New("read: WINDOW_UPDATE of 0 (PROTOCOL_ERROR)")
		}
		if s := t.streams[fh.StreamID]; s != nil {
			s.err = errors.New("WINDOW_UPDATE of 0")
			t.resetLocked(s, http2.ErrCodeProtocol)
		}
		return nil
	}
	return t.windowLocked(fh.StreamID, int64(inc))
}

// readHeaders reads a HEADERS or CONTINUATION frame's payload and decodes
// its header block fragment (RFC 9113 §6.2, §6.10).
func (t *transport) readHeaders(fh http2.FrameHeader) error {
	p := t.hbuf[:0]
	if cap(p) < int(fh.Length) {
		p = make([]byte, fh.Length)
		t.hbuf = p
	}
	p = p[:fh.Length]
	if _, err := io.ReadFull(t.br, p); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	first := fh.Type == http2.FrameHeaders
	switch {
	case fh.StreamID == 0, first && t.contID != 0, !first && fh.StreamID != t.contID:
		return fmt.Errorf("read: misplaced %v frame on stream %d (PROTOCOL_ERROR)", fh.Type, fh.StreamID)
	}
	if first {
		pad := 0
		if fh.Flags.Has(http2.FlagHeadersPadded) {
			if len(p) == 0 {
				return errors.New("read: padded HEADERS without a pad length (PROTOCOL_ERROR)")
			}
			pad, p = int(p[0]), p[1:]
		}
		if fh.Flags.Has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				return errors.New("read: HEADERS too short for its priority (PROTOCOL_ERROR)")
			}
			p = p[5:]
		}
		if pad > len(p) {
			return errors.New("read: HEADERS padding longer than the frame (PROTOCOL_ERROR)")
		}
		p = p[:len(p)-pad]
	}
	end := fh.Flags.Has(http2.FlagHeadersEndHeaders) // CONTINUATION's END_HEADERS is the same bit
	t.contID = 0
	if !end {
		t.contID = fh.StreamID
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.headersLocked(fh.StreamID, p, end, first && fh.Flags.Has(http2.FlagHeadersEndStream), first)
}

// handleLocked acts on one frame; an error ends the connection.
func (t *transport) handleLocked(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		return t.dataLocked(f)
	case *http2.RSTStreamFrame:
		if s := t.streams[f.StreamID]; s != nil {
			s.wasReset, s.rst, s.err = true, f.ErrCode, fmt.Errorf("stream reset by the server: %v", f.ErrCode)
			t.endLocked(s)
		}
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		if err := t.settingsLocked(f); err != nil {
			return err
		}
	case *http2.PingFrame:
		if !f.IsAck() {
			n := len(t.wbuf)
			t.wbuf = appendFrameHeader(t.wbuf, 8, http2.FramePing, http2.FlagPingAck, 0)
			t.wbuf = append(t.wbuf, f.Data[:]...)
			t.pingAcks += len(t.wbuf) - n
		}
	case *http2.WindowUpdateFrame:
		return t.windowLocked(f.StreamID, int64(f.Increment))
	case *http2.GoAwayFrame:
		t.goAwayLocked(f)
	}
	return nil
}

// settingsLocked applies the server's settings and acknowledges them.
func (t *transport) settingsLocked(f *http2.SettingsFrame) error {
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			t.maxConc = int(min(s.Val, 1<<30))
		case http2.SettingMaxFrameSize:
			t.maxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			t.hdr.tableLimit(s.Val)
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - t.initWin
			t.initWin = int64(s.Val)
			for _, st := range t.streams {
				st.sendWin += delta
			}
		}
		return s.Valid() // the range checks of RFC 9113 §6.5.2
	})
	if err != nil {
		return fmt.Errorf("server settings: %w", err)
	}
	t.wbuf = appendFrameHeader(t.wbuf, 0, http2.FrameSettings, http2.FlagSettingsAck, 0)
	t.wakeLocked()
	return nil
}

func (t *transport) windowLocked(id uint32, inc int64) error {
	if id == 0 {
		if t.sendWin += inc; t.sendWin > maxStreamID {
			return errors.New("connection window over 2^31-1 (FLOW_CONTROL_ERROR)")
		}
	} else if s := t.streams[id]; s != nil {
		s.sendWin += inc
	}
	t.wakeLocked()
	return nil
}

// goAwayLocked stops new streams and ends those the server will not
// process (above its last stream id) without an answer; the rest finish.
func (t *transport) goAwayLocked(f *http2.GoAwayFrame) {
	t.goaway = true
	t.usable.Store(false)
	for id, s := range t.streams {
		if id > f.LastStreamID {
			s.err = fmt.Errorf("%w: GOAWAY %v %q", errGoAway, f.ErrCode, f.DebugData())
			t.endLocked(s)
		}
	}
	if t.active == 0 && t.err == nil {
		t.err = errDrained
		_ = t.nc.Close()
	}
	t.wakeLocked()
}

// dataLocked collects a stream's message and gives the flow control
// credit back: the connection's when half the window is used, the
// stream's only for an answer larger than its window's half.
func (t *transport) dataLocked(f *http2.DataFrame) error {
	n := int(f.Header().Length)
	if t.recvUsed += n; t.recvUsed >= initialConnWindow/2 {
		t.wbuf = appendWindowUpdate(t.wbuf, 0, uint32(t.recvUsed))
		t.recvUsed = 0
	}
	s := t.streams[f.StreamID]
	if s == nil {
		return nil
	}
	if !s.headers {
		s.err = errors.New("DATA before HEADERS")
		t.resetLocked(s, http2.ErrCodeProtocol)
		return nil
	}
	if len(s.msg)+len(f.Data()) > t.c.cfg.MaxRecvMsgSize+5 {
		s.tooLarge = true
		t.resetLocked(s, http2.ErrCodeCancel)
		return nil
	}
	s.msg = append(s.msg, f.Data()...)
	if s.recvUsed += n; !f.StreamEnded() && s.recvUsed >= initialStreamWindow/2 {
		t.wbuf = appendWindowUpdate(t.wbuf, s.id, uint32(s.recvUsed))
		s.recvUsed = 0
	}
	if f.StreamEnded() {
		t.endLocked(s)
	}
	return nil
}

// headersLocked decodes a header block fragment into its stream's answer.
// first says the fragment opens a block (HEADERS, not CONTINUATION).
func (t *transport) headersLocked(id uint32, frag []byte, endHeaders, endStream, first bool) error {
	if first {
		t.decoding = t.streams[id]
		if s := t.decoding; s != nil {
			s.pendingEnd = endStream
		}
	}
	if _, err := t.hdec.Write(frag); err != nil {
		return fmt.Errorf("decode headers: %w", err)
	}
	if !endHeaders {
		return nil
	}
	if err := t.hdec.Close(); err != nil {
		return fmt.Errorf("decode headers: %w", err)
	}
	s := t.decoding
	t.decoding = nil
	if s == nil {
		return nil
	}
	s.headers = true
	if s.pendingEnd {
		t.endLocked(s)
	}
	return nil
}

// emit records the answer's fields that matter to a unary call.
func (t *transport) emit(f hpack.HeaderField) {
	s := t.decoding
	if s == nil {
		return
	}
	switch f.Name {
	case ":status":
		s.httpStatus, _ = strconv.Atoi(f.Value)
	case "content-type":
		s.grpcType = strings.HasPrefix(f.Value, "application/grpc")
	case "grpc-status":
		if c, err := strconv.ParseUint(f.Value, 10, 32); err == nil {
			s.code, s.hasCode = uint32(c), true
		}
	case "grpc-message":
		s.message = f.Value
	case "grpc-status-details-bin":
		s.details = f.Value
	case "grpc-encoding":
		s.encoding = f.Value
	}
}
