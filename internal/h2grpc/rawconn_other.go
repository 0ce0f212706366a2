//go:build !linux

package h2grpc

import (
	"io"
	"net"
)

// connIO returns what reads and writes nc: nc itself.
func connIO(nc net.Conn) io.ReadWriter { return nc }
