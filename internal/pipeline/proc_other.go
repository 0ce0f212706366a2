//go:build !linux

package pipeline

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"github.com/otelbench/otelbench/internal/profile"
)

// ErrNotSupported is returned where the agent's figures cannot be read.
var ErrNotSupported = errors.New("pipeline: agent CPU, RSS, descriptors and syscalls need Linux /proc")

func prepareCmd(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func processExists(pid int) error {
	_, err := os.FindProcess(pid)
	return err
}

type procSample struct {
	cpuUser, cpuSys float64
	peakRSS         int64
	rss             int64
	fds             int
}

type procReader struct{}

func newProcReader() (*procReader, error)          { return nil, ErrNotSupported }
func (*procReader) sample(int) (procSample, error) { return procSample{}, ErrNotSupported }
func (*procReader) close()                         {}
func traceSyscalls(context.Context, int, bool, chan<- struct{}) (*profile.SyscallReport, error) {
	return nil, ErrNotSupported
}
