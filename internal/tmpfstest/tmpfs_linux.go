package tmpfstest

import (
	"os"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (a mount option such as "2m") with flags (syscall.MS_RDONLY,
// or 0) on a new temporary directory, unmounted at the test's end, and returns its path. It
// skips the test where it cannot mount: not root, or no mount permission.
func Mount(t testing.TB, flags uintptr, size string) string {
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
