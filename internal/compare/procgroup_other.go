//go:build !unix

package compare

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// terminateGroup kills p: there is no SIGTERM to send it here.
func terminateGroup(p *os.Process) { _ = p.Kill() }

// killGroup kills p.
func killGroup(p *os.Process) { _ = p.Kill() }
