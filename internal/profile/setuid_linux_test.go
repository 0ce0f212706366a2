package profile

import "syscall"

// syscallSetuidNobody drops to uid/gid 65534 on every thread, which clears
// the effective capabilities.
func syscallSetuidNobody() error {
	if err := syscall.Setgid(65534); err != nil {
		return err
	}
	return syscall.Setuid(65534)
}
