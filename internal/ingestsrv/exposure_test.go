package ingestsrv

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
)

func TestWarnExposure(t *testing.T) {
	tests := []struct {
		name  string
		addr  net.Addr
		token string
		warn  bool
	}{
		{"loopback v4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4318}, "", false},
		{"loopback v6", &net.TCPAddr{IP: net.IPv6loopback, Port: 4318}, "", false},
		{"all interfaces, no token", &net.TCPAddr{IP: net.IPv4zero, Port: 4318}, "", true},
		{"LAN address, no token", &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 4318}, "", true},
		{"all interfaces with token", &net.TCPAddr{IP: net.IPv4zero, Port: 4318}, "t0ken", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := &Server{cfg: Config{AuthToken: tt.token}, log: slog.New(slog.NewTextHandler(&buf, nil))}
			s.warnExposure(tt.addr)
			if got := strings.Contains(buf.String(), "level=WARN"); got != tt.warn {
				t.Errorf("warned = %v, want %v (log: %q)", got, tt.warn, buf.String())
			}
		})
	}
}
