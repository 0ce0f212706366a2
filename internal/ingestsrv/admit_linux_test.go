package ingestsrv

import (
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/polltest"
)

// queued reports whether c has unread bytes in its socket (FIONREAD).
func queued(t *testing.T, c net.Conn) bool {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestWaitReadable covers the rejecter's buffer-free wait, in particular a
// request that arrived before the wait began (the case a readiness flag
// alone misses: every such client saw its connection closed unanswered).
func TestWaitReadable(t *testing.T) {
	tests := []struct {
		name   string
		client func(c net.Conn) error
		want   bool
	}{
		{"data before the wait", func(c net.Conn) error { _, err := c.Write([]byte("POST")); return err }, true},
		{"closed without data", func(c net.Conn) error { return c.Close() }, false},
		{"nothing by the deadline", func(net.Conn) error { return nil }, false},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			server, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer server.Close()
			if err := tt.client(client); err != nil {
				t.Fatal(err)
			}
			if tt.want { // make sure the byte is in the server's socket before the wait
				polltest.Until(t, "byte queued", func() bool { return queued(t, server) })
			}
			if err := server.SetDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if got := waitReadable(server); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
