package pipeline

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/procfd"
	"github.com/otelbench/otelbench/internal/profile"
)

// prepareCmd puts the agent in its own process group, so that stopping it
// reaches the children of a wrapper script too.
func prepareCmd(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func terminate(cmd *exec.Cmd) { _ = unix.Kill(-cmd.Process.Pid, unix.SIGTERM) }

func kill(cmd *exec.Cmd) { _ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }

func processExists(pid int) error { return unix.Kill(pid, 0) }

// procSample is one reading of the agent's figures from /proc.
type procSample struct {
	cpuUser, cpuSys float64 // seconds
	peakRSS         int64   // VmHWM, bytes
	rss             int64
	fds             int
}

// procReader reads an agent's /proc figures.
type procReader struct {
	fs  procfs.FS
	fds *procfd.FS
}

func newProcReader() (*procReader, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	fds, err := procfd.NewFS("")
	if err != nil {
		return nil, fmt.Errorf("procfd: %w", err)
	}
	return &procReader{fs: fs, fds: fds}, nil
}

func (r *procReader) sample(pid int) (procSample, error) {
	p, err := r.fs.Proc(pid)
	if err != nil {
		return procSample{}, fmt.Errorf("read agent /proc: %w", err)
	}
	st, err := p.Stat()
	if err != nil {
		return procSample{}, fmt.Errorf("read agent /proc stat: %w", err)
	}
	status, err := p.NewStatus()
	if err != nil {
		return procSample{}, fmt.Errorf("read agent /proc status: %w", err)
	}
	s := procSample{
		cpuUser: float64(st.UTime) / userHZ, cpuSys: float64(st.STime) / userHZ,
		peakRSS: int64(status.VmHWM), rss: int64(status.VmRSS),
	}
	s.fds, _, err = r.fds.Count(pid)
	if err != nil {
		return s, fmt.Errorf("count agent fds: %w", err)
	}
	return s, nil
}

func (r *procReader) close() { _ = r.fds.Close() }

// userHZ is the kernel's USER_HZ, the unit of utime and stime in
// /proc/PID/stat: 100 on every Linux architecture Go supports.
const userHZ = 100

// traceSyscalls counts the syscalls of pid and its children until ctx
// ends; attached is closed once tracing is live.
func traceSyscalls(ctx context.Context, pid int, stacks bool, attached chan<- struct{}) (*profile.SyscallReport, error) {
	return profile.TraceSyscalls(ctx, profile.SyscallConfig{
		Target: profile.Target{PID: pid, FollowChildren: true, Attached: func(int) { close(attached) }},
		Stacks: stacks, NoLatency: !stacks,
	})
}
