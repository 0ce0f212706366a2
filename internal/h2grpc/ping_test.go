package h2grpc

import (
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestPingAcked: a server's PING is acknowledged whether it comes before
// the answer (as grpc-go's server pings for every request it reads; the
// ack may wait for the answer) or after it, when the caller has nothing
// more to send and the ack cannot ride on its next request.
func TestPingAcked(t *testing.T) {
	okAnswer := func(id uint32) []byte {
		return frames(id, []byte{0, 0, 0, 0, 0}, hf(":status", "200", "content-type", "application/grpc"), hf("grpc-status", "0"))
	}
	ping := func() []byte {
		var b bytes.Buffer
		_ = http2.NewFramer(&b, nil).WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
		return b.Bytes()
	}()
	for _, tt := range []struct {
		name      string
		pingFirst bool
		pause     time.Duration // between the ping and the answer
	}{{"before the answer", true, 0}, {"before a later answer", true, 100 * time.Millisecond}, {"after the answer", false, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			acked := make(chan struct{})
			addr := rawPeer(t, func(c net.Conn, fr *http2.Framer) {
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					switch f := f.(type) {
					case *http2.PingFrame:
						if f.IsAck() && f.Data == [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
							close(acked)
							return
						}
					case *http2.DataFrame:
						if !f.StreamEnded() {
							continue
						}
						first, second := ping, okAnswer(f.StreamID)
						if !tt.pingFirst {
							first, second = second, first
						}
						if _, err := c.Write(first); err != nil {
							return
						}
						time.Sleep(tt.pause)
						if _, err := c.Write(second); err != nil {
							return
						}
					}
				}
			})
			call := newClient(t, addr, "").NewCall()
			if err := call.Invoke(timeout(t, 5*time.Second), 0, []byte("request")); err != nil {
				t.Fatalf("call: %v", err)
			}
			select {
			case <-acked:
			case <-time.After(10 * time.Second):
				t.Fatal("the server's PING was not acknowledged within 10s of an idle client")
			}
		})
	}
}
