package h2grpc

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// TestHeaderIndexing: calls of two methods on one connection each reach
// their own method through grpc-go's decoder while the blocks move from
// literals to indexed fields, the second method's first block arriving
// after the first method's block is warm; a warm block is a few bytes.
func TestHeaderIndexing(t *testing.T) {
	addr, _ := startServer(t, echo)
	c, err := NewClient(Config{Addr: addr, UserAgent: "h2grpc-test", Timeout: 5 * time.Second,
		Methods: []Method{{Path: echoPath}, {Path: "/test.Echo/Missing", Metadata: [][2]string{{"authorization", "Bearer x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	call := c.NewCall()
	for i, m := range []int{0, 0, 0, 1, 0, 1, 0, 1} {
		want := codes.OK
		if m == 1 {
			want = codes.Unimplemented
		}
		body := []byte(fmt.Sprint("call ", i))
		if err := call.Invoke(timeout(t, 5*time.Second), m, body); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if call.Code() != want || want == codes.OK && !bytes.Equal(call.Reply(), body) {
			t.Fatalf("call %d (method %d): got %v %q, want %v", i, m, call.Code(), call.Reply(), want)
		}
	}
	tr := c.cur.Load()
	tr.mu.Lock()
	warm := tr.hdr.block(c, 0)
	tr.mu.Unlock()
	if len(warm) > len(c.fields[0]) || len(warm) >= len(c.static[0])/4 {
		t.Errorf("warm block of %d fields is %d bytes (static %d), want a byte a field", len(c.fields[0]), len(warm), len(c.static[0]))
	}
}

// TestHeaderTableLimit: a server that allows no dynamic table gets blocks
// that never refer to one, which its decoder reads.
func TestHeaderTableLimit(t *testing.T) {
	decoded := make(chan error, 8)
	addr := rawPeer(t, func(c net.Conn, fr *http2.Framer) {
		dec := hpack.NewDecoder(0, nil)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.HeadersFrame:
				_, err := dec.DecodeFull(f.HeaderBlockFragment())
				decoded <- err
			case *http2.DataFrame:
				if f.StreamEnded() {
					ok := frames(f.StreamID, []byte{0, 0, 0, 0, 0}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
					if _, err := c.Write(ok); err != nil {
						return
					}
				}
			}
		}
	}, http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
	call := newClient(t, addr, "").NewCall()
	for i := range 3 {
		if err := call.Invoke(timeout(t, 5*time.Second), 0, []byte("request")); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if err := <-decoded; err != nil {
			t.Fatalf("call %d: the server could not decode the headers: %v", i, err)
		}
	}
}
