package ingestsrv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/store"
)

// mountTmpfs mounts a tmpfs of the given size with flags, or skips the test.
func mountTmpfs(t *testing.T, flags uintptr, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", flags, "size="+size); err != nil {
		t.Skipf("mount tmpfs: %v (needs root and mount permission)", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	return mnt
}

// TestStartupErrorNamesPathAndCause: on a read-only file system or a full
// disk, New fails with an error that names the data directory and the
// operating system's reason, not only SQLite's "unable to open database
// file (14)" or "disk I/O error".
func TestStartupErrorNamesPathAndCause(t *testing.T) {
	readOnly := mountTmpfs(t, syscall.MS_RDONLY, "1m")
	full := mountTmpfs(t, 0, "256k")
	if err := os.WriteFile(filepath.Join(full, "filler"), make([]byte, 512<<10), 0o644); err == nil {
		t.Fatal("wrote 512k to a 256k tmpfs")
	}
	tests := []struct {
		name, dir, cause string
	}{
		{"read-only file system", readOnly, "read-only file system"},
		{"full disk", full, "no space left on device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(context.Background(), Config{Config: store.Config{Dir: tt.dir, Logger: discard()}})
			if err == nil {
				_ = srv.Close(context.Background())
				t.Fatal("New succeeded")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.dir) || !strings.Contains(msg, tt.cause) {
				t.Errorf("error %q, want it to name %s and %q", msg, tt.dir, tt.cause)
			}
		})
	}
}
