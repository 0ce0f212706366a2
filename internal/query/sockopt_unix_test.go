//go:build unix

package query

import "syscall"

// setRecvBuffer sets SO_RCVBUF on the socket fd (smallRecvDialer calls it before the handshake).
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
