package tmpfstest

import (
	"os"
	"path/filepath"
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

// MountReserved mounts a tmpfs of size like Mount and takes reserve bytes of it with a file;
// free removes that file. A disk-full test fills the rest of the disk, then calls free to show
// that writing recovers once space comes back.
func MountReserved(t testing.TB, size string, reserve int) (mnt string, free func()) {
	t.Helper()
	mnt = Mount(t, 0, size)
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, reserve), 0o644); err != nil {
		t.Fatal(err)
	}
	return mnt, func() {
		t.Helper()
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
}
