//go:build !unix

package compare

import (
	"os"
	"syscall"
)

// groupAttr is nil where there are no process groups.
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills p where signals and process groups do not exist: the
// server gets no grace, and children it started are left to the OS.
func signalGroup(p *os.Process, _ syscall.Signal) { _ = p.Kill() }
