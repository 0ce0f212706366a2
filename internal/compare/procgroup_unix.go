//go:build unix

package compare

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own, so that signals reach
// the server's children and a Ctrl-C at the terminal does not.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminateGroup sends SIGTERM to p's process group.
func terminateGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to p's process group.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
