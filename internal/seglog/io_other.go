//go:build !linux

package seglog

import (
	"errors"
	"os"
	"syscall"
)

// iovecs is a reusable list of buffers for one write; outside Linux they are written one by one.
type iovecs struct {
	bufs [][]byte
}

func (v *iovecs) reset() {
	clear(v.bufs)
	v.bufs = v.bufs[:0]
}

func (v *iovecs) add(b []byte) {
	if len(b) > 0 {
		v.bufs = append(v.bufs, b)
	}
}

// writeVec writes v's buffers contiguously at off.
func writeVec(f *os.File, v *iovecs, off int64) error {
	for _, b := range v.bufs {
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// fdatasync falls back to a full fsync.
func fdatasync(f *os.File) error { return f.Sync() }

// syncDir fsyncs a directory where the platform allows it.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// isNoSpace reports whether err means the filesystem is full.
func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
