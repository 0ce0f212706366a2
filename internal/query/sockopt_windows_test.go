package query

import "syscall"

// setRecvBuffer sets SO_RCVBUF on the socket fd (smallRecvDialer calls it before the handshake).
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
