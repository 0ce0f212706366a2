package h2grpc

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawConn reads and writes a TCP connection with raw system calls on its
// non-blocking socket, waiting in the netpoller (deadlines included) when
// it would block, as net.Conn does. A raw call never enters the runtime's
// syscall state, and that state is what costs a closed-model client at one
// worker (GOMAXPROCS 1) CPU for nothing:
//   - entering it wakes sysmon whenever sysmon sleeps because every P was
//     idle, which a one-worker client is between each request and its
//     answer; sysmon then polls every 20 µs until the next idle spell;
//   - a write of a 28 KB request over loopback runs the receiver's TCP
//     input too and outlasts sysmon's 20 µs tick, so sysmon hands the P to
//     another thread, and the writer's thread parks on a futex to get it
//     back.
//
// Both calls are short, non-blocking ones, which is what raw calls are for.
type rawConn struct {
	rc syscall.RawConn
}

// connIO returns what reads and writes nc: raw calls for TCP, else nc.
func connIO(nc net.Conn) io.ReadWriter {
	if tc, ok := nc.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			return rawConn{rc}
		}
	}
	return nc
}

func (c rawConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case 0:
				n = int(r)
				return true
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until readable
			default:
				errno = e
				return true
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c rawConn) Write(b []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Err: errno}
	}
	return n, err
}
