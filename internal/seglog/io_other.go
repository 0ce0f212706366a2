//go:build !linux

package seglog

import (
	"errors"
	"os"
	"syscall"
)

// sysIovecs is unused outside Linux: buffers are written one by one.
type sysIovecs = struct{}

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

// allocate returns errAllocate: new segments are zero-filled.
func allocate(*os.File, int64) error { return errAllocate }

// dropCache does nothing where posix_fadvise is not used.
func dropCache(*os.File, int64, int64) {}

// prefetch does nothing where posix_fadvise is not used.
func prefetch(*os.File, int64, int64) {}
