//go:build unix

package compare

import (
	"os"
	"syscall"
)

// groupAttr starts a server in its own process group, so that signals reach
// its children and a Ctrl-C at the terminal does not.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to p's whole process group.
func signalGroup(p *os.Process, sig syscall.Signal) { _ = syscall.Kill(-p.Pid, sig) }
