package loadgen

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's socket calls never block (non-blocking sockets, a zero
// epoll timeout), so they go through RawSyscall: no entersyscall/exitsyscall
// and, above all, no P handed off by sysmon when a loopback writev of a large
// body runs past its 20 µs tick. Only the waiting epoll_wait (pollWait)
// tells the runtime it may block.

func rawWritev(fd int, iov [][]byte, vecs *[2]unix.Iovec) (int, error) {
	n := 0
	for _, b := range iov {
		if len(b) == 0 || n == len(vecs) {
			continue
		}
		vecs[n].Base = &b[0]
		vecs[n].SetLen(len(b))
		n++
	}
	if n == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&vecs[0])), uintptr(n))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// pollNow returns the ready events without waiting.
func pollNow(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// pollWait waits up to msec for events, letting the runtime run other
// goroutines meanwhile.
func pollWait(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	return unix.EpollWait(epfd, events, msec)
}
