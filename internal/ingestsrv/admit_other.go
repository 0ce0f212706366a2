//go:build !linux

package ingestsrv

import "net"

// waitReadable is a no-op off Linux: the rejecter waits in Read, holding
// its buffer (the Linux version waits without one).
func waitReadable(net.Conn) bool { return true }
