package h2grpc

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// rawServer accepts connections on loopback; each reads the client's
// preface, sends SETTINGS (limits), then the bytes answer returns for the
// first stream once its request ended, and keeps reading until the client
// leaves.
func rawServer(t testing.TB, answer func(id uint32) []byte, limits ...http2.Setting) string {
	return rawPeer(t, func(c net.Conn, fr *http2.Framer) { serveRaw(c, fr, answer) }, limits...)
}

// rawPeer listens on loopback and hands each connection, once it has read
// the client's preface and sent SETTINGS (limits), to serve; it returns the
// address.
func rawPeer(t testing.TB, serve func(c net.Conn, fr *http2.Framer), limits ...http2.Setting) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
					return
				}
				fr := http2.NewFramer(c, c)
				fr.SetMaxReadFrameSize(16384) // what RFC 9113 lets a client assume
				fr.SetReuseFrames()
				if fr.WriteSettings(limits...) == nil {
					serve(c, fr)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func serveRaw(c net.Conn, fr *http2.Framer, answer func(id uint32) []byte) {
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		d, ok := f.(*http2.DataFrame)
		if !ok {
			continue
		}
		if n := d.Header().Length; n > 0 && fr.WriteWindowUpdate(0, n) != nil {
			return
		}
		if d.StreamEnded() {
			if _, err := c.Write(answer(d.StreamID)); err != nil {
				return
			}
		}
	}
}

// frames encodes an answer: header fields (a HEADERS frame each list,
// the last ending the stream) and DATA between them.
func frames(id uint32, data []byte, blocks ...[]hpack.HeaderField) []byte {
	var out bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for i, fields := range blocks {
		hb.Reset()
		for _, f := range fields {
			_ = enc.WriteField(f)
		}
		last := i == len(blocks)-1
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: last})
		if i == 0 && data != nil {
			_ = fr.WriteData(id, false, data)
		}
	}
	return out.Bytes()
}

func hf(kv ...string) []hpack.HeaderField {
	var out []hpack.HeaderField
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

// TestHostileServers: whatever a server sends, a call ends within its
// context with an error or a status; answers that are not gRPC's map as
// grpc-go maps them.
func TestHostileServers(t *testing.T) {
	okHeaders := hf(":status", "200", "content-type", "application/grpc")
	tests := []struct {
		name     string
		answer   func(id uint32) []byte
		wantErr  bool // ErrNoAnswer
		wantCode codes.Code
	}{
		{"never answers", func(uint32) []byte { return nil }, true, 0},
		{"garbage", func(uint32) []byte { return []byte("\x00\x00\x04\x00garbage that is no frame at all") }, true, 0},
		{"HTTP/1.1", func(uint32) []byte { return []byte("HTTP/1.1 400 Bad Request\r\n\r\n") }, true, 0},
		{"http 503 without grpc-status", func(id uint32) []byte {
			return frames(id, nil, hf(":status", "503", "content-type", "text/plain"))
		}, false, codes.Unavailable},
		{"trailers-only", func(id uint32) []byte {
			return frames(id, nil, hf(":status", "200", "content-type", "application/grpc", "grpc-status", "8", "grpc-message", "slow%20down"))
		}, false, codes.ResourceExhausted},
		{"ok without a message", func(id uint32) []byte {
			return frames(id, nil, okHeaders, hf("grpc-status", "0"))
		}, false, codes.Internal},
		{"ok with a short message", func(id uint32) []byte {
			return frames(id, []byte{0, 0, 0, 0, 9, 1}, okHeaders, hf("grpc-status", "0"))
		}, false, codes.Internal},
		{"ok with one message", func(id uint32) []byte {
			return frames(id, []byte{0, 0, 0, 0, 1, 7}, okHeaders, hf("grpc-status", "0"))
		}, false, codes.OK},
		{"reset after headers", func(id uint32) []byte {
			b := frames(id, nil, hf(":status", "200", "content-type", "application/grpc"), nil)
			b = b[:len(b)-9] // the empty trailers' frame
			var rst bytes.Buffer
			_ = http2.NewFramer(&rst, nil).WriteRSTStream(id, http2.ErrCodeRefusedStream)
			return append(b, rst.Bytes()...)
		}, false, codes.Unavailable},
		{"goaway below the stream", func(id uint32) []byte {
			var b bytes.Buffer
			_ = http2.NewFramer(&b, nil).WriteGoAway(0, http2.ErrCodeNo, []byte("bye"))
			return b.Bytes()
		}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := rawServer(t, tt.answer)
			call := newClient(t, addr, "").NewCall()
			start := time.Now()
			err := call.Invoke(timeout(t, 300*time.Millisecond), 0, []byte("request"))
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("call took %v, want it bounded by its 300ms context", d)
			}
			switch {
			case tt.wantErr && !errors.Is(err, ErrNoAnswer):
				t.Fatalf("got %v (code %v), want ErrNoAnswer", err, call.Code())
			case !tt.wantErr && err != nil:
				t.Fatalf("got %v, want code %v", err, tt.wantCode)
			case !tt.wantErr && call.Code() != tt.wantCode:
				t.Fatalf("got code %v (%s), want %v", call.Code(), call.Status().Message(), tt.wantCode)
			}
		})
	}
}

// TestServerLimits: a server with a small frame size and one stream at a
// time still gets every call, in frames it accepts.
func TestServerLimits(t *testing.T) {
	okAnswer := func(id uint32) []byte {
		return frames(id, []byte{0, 0, 0, 0, 0}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
	}
	addr := rawServer(t, okAnswer, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: 16384}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	c := newClient(t, addr, "", [2]string{"x-big", string(bytes.Repeat([]byte("m"), 20000))}) // headers over one frame
	done := make(chan error, 4)
	for range 4 {
		go func() {
			call := c.NewCall()
			err := call.Invoke(timeout(t, 5*time.Second), 0, make([]byte, 40000))
			if err == nil && call.Code() != codes.OK {
				err = errors.New(call.Code().String())
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// FuzzServerBytes sends arbitrary bytes as a server's answer: the call
// ends within its context, without a panic.
func FuzzServerBytes(f *testing.F) {
	ok := frames(1, []byte{0, 0, 0, 0, 1, 7}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
	f.Add(ok)
	f.Add(ok[:len(ok)/2])
	f.Add([]byte("\x00\x00\x08\x06\x00\x00\x00\x00\x00pingping"))
	f.Add([]byte("\x00\x00\x04\x08\x00\x00\x00\x00\x00\x7f\xff\xff\xff\x00\x00\x04\x08\x00\x00\x00\x00\x00\x7f\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		addr := rawServer(t, func(uint32) []byte { return b })
		call := newClient(t, addr, "").NewCall()
		start := time.Now()
		_ = call.Invoke(timeout(t, 200*time.Millisecond), 0, []byte("request"))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("call took %v, want it bounded by its context", d)
		}
	})
}

// TestServerStopsReading: a server that opens every window and then reads
// nothing more fails the call once a write has waited the client's
// Timeout, well before the call's own deadline.
func TestServerStopsReading(t *testing.T) {
	addr := rawPeer(t, func(c net.Conn, fr *http2.Framer) {
		if fr.WriteWindowUpdate(0, 1<<31-1-65535) != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 1)) // then nothing: the client's writes pile up
		<-t.Context().Done()
	}, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
	c, err := NewClient(Config{Addr: addr, Methods: []Method{{Path: echoPath}}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	start := time.Now()
	err = c.NewCall().Invoke(timeout(t, 60*time.Second), 0, make([]byte, 64<<20))
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("got %v, want ErrNoAnswer", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("call returned after %v, want it bounded by the 300ms write timeout", d)
	}
	t.Logf("call failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestGoAwayRefusedRetried: a call whose stream a GOAWAY refused (its id
// above the last the server processed) is sent again on a new connection
// and gets that one's answer, as grpc-go retries it; a server that refuses
// every try still ends the call without an answer (TestHostileServers).
func TestGoAwayRefusedRetried(t *testing.T) {
	var answers atomic.Int32
	addr := rawServer(t, func(id uint32) []byte {
		if answers.Add(1) == 1 {
			var b bytes.Buffer
			_ = http2.NewFramer(&b, nil).WriteGoAway(0, http2.ErrCodeNo, []byte("draining"))
			return b.Bytes()
		}
		return frames(id, []byte{0, 0, 0, 0, 0}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
	})
	call := newClient(t, addr, "").NewCall()
	if err := call.Invoke(timeout(t, 10*time.Second), 0, []byte("request")); err != nil {
		t.Fatalf("got %v, want the second connection's answer", err)
	}
	if call.Code() != codes.OK || answers.Load() != 2 {
		t.Fatalf("got code %v after %d answers, want OK after 2", call.Code(), answers.Load())
	}
}
