package seglog

import (
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovMax is Linux's IOV_MAX: pwritev takes at most this many buffers a call.
const iovMax = 1024

// sysIovecs is the kernel's form of an iovecs' buffers, reused across writes.
type sysIovecs = []unix.Iovec

// writeVec writes v's buffers contiguously at off with pwritev, resuming after short writes.
func writeVec(f *os.File, v *iovecs, off int64) error {
	fd := int(f.Fd())
	bufs, skip := v.bufs, 0
	for len(bufs) > 0 {
		v.vec = v.vec[:0]
		for i, b := range bufs[:min(len(bufs), iovMax)] {
			if i == 0 {
				b = b[skip:]
			}
			iv := unix.Iovec{Base: &b[0]}
			iv.SetLen(len(b))
			v.vec = append(v.vec, iv)
		}
		r, _, e := unix.Syscall6(unix.SYS_PWRITEV, uintptr(fd), uintptr(unsafe.Pointer(&v.vec[0])),
			uintptr(len(v.vec)), uintptr(off), uintptr(uint64(off)>>32>>32), 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return os.NewSyscallError("pwritev", e)
		}
		n := int(r)
		if n == 0 {
			return os.NewSyscallError("pwritev", syscall.EIO)
		}
		off += int64(n)
		for n > 0 && len(bufs) > 0 {
			if rest := len(bufs[0]) - skip; n >= rest {
				n -= rest
				bufs, skip = bufs[1:], 0
			} else {
				skip += n
				n = 0
			}
		}
	}
	return nil
}

// fdatasync flushes f's data and the metadata needed to read it back (its size), not its times.
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// syncDir fsyncs a directory, making created and removed names in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// isNoSpace reports whether err means the filesystem or the user's quota is full.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// allocate reserves size bytes for f with fallocate, or returns errAllocate where the
// filesystem cannot.
func allocate(f *os.File, size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, 0, size)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EOPNOTSUPP || err == unix.ENOSYS:
			return errAllocate
		}
		return err
	}
}

// dropCache asks the kernel to drop f's clean cached pages between off and end (0: the end of
// the file); the pages only partly inside stay.
func dropCache(f *os.File, off, end int64) {
	n := int64(0)
	if end > 0 {
		n = end - off
	}
	unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}

// prefetch asks the kernel to read f's pages between off and end into the page cache, without
// waiting for them.
func prefetch(f *os.File, off, end int64) {
	unix.Fadvise(int(f.Fd()), off, end-off, unix.FADV_WILLNEED)
}
