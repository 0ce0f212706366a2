package syscalltab

import (
	"runtime"
	"syscall"
	"testing"
)

// TestNativeMatchesSyscallPackage cross-checks the table of this machine
// against the constants of the syscall package.
func TestNativeMatchesSyscallPackage(t *testing.T) {
	tab := Native()
	if tab.Arch() != runtime.GOARCH || tab.Len() < 300 {
		t.Skipf("no full table for %s", runtime.GOARCH)
	}
	for name, nr := range map[string]int{
		"getpid": syscall.SYS_GETPID, "read": syscall.SYS_READ, "write": syscall.SYS_WRITE,
		"fstat": syscall.SYS_FSTAT, "openat": syscall.SYS_OPENAT, "close": syscall.SYS_CLOSE,
	} {
		if got := tab.Name(nr); got != name {
			t.Errorf("Name(%d) = %q, want %q", nr, got, name)
		}
	}
}
