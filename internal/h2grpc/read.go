package h2grpc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// readLoop reads frames until the connection ends, then fails the streams
// left. It is the transport's only reader.
func (t *transport) readLoop() {
	for {
		f, err := t.fr.ReadFrame()
		var se http2.StreamError
		if errors.As(err, &se) {
			t.mu.Lock()
			if s := t.streams[se.StreamID]; s != nil {
				s.err = fmt.Errorf("stream error: %w", se)
				t.resetLocked(s, se.Code)
			}
			t.mu.Unlock()
			continue
		}
		t.mu.Lock()
		if err == nil {
			err = t.handleLocked(f)
		} else {
			err = fmt.Errorf("read: %w", err)
		}
		if err != nil {
			t.failLocked(err)
			t.mu.Unlock()
			return
		}
		t.flushLocked()
		t.mu.Unlock()
	}
}

// handleLocked acts on one frame; an error ends the connection.
func (t *transport) handleLocked(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		return t.dataLocked(f)
	case *http2.HeadersFrame:
		return t.headersLocked(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded(), true)
	case *http2.ContinuationFrame:
		return t.headersLocked(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), false, false)
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
			t.wbuf = appendFrameHeader(t.wbuf, 8, http2.FramePing, http2.FlagPingAck, 0)
			t.wbuf = append(t.wbuf, f.Data[:]...)
		}
	case *http2.WindowUpdateFrame:
		return t.windowLocked(f)
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

func (t *transport) windowLocked(f *http2.WindowUpdateFrame) error {
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		if t.sendWin += inc; t.sendWin > maxStreamID {
			return errors.New("connection window over 2^31-1 (FLOW_CONTROL_ERROR)")
		}
	} else if s := t.streams[f.StreamID]; s != nil {
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
