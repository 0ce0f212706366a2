package compare

import (
	"fmt"
	"sync"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/otelbench/otelbench/internal/procfd"
)

// procSampler reads CPU time, peak RSS and open fds of a process.
type procSampler struct {
	fs  procfs.FS
	fds *procfd.FS
	hz  float64
}

func newProcSampler(root string) (*procSampler, error) {
	if root == "" {
		root = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("open procfs: %w", err)
	}
	fds, err := procfd.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("open procfs: %w", err)
	}
	return &procSampler{fs: fs, fds: fds, hz: clockTicks()}, nil
}

// atClkTck is AT_CLKTCK from <elf.h>: the auxiliary-vector entry holding
// the kernel's USER_HZ, which glibc's sysconf(_SC_CLK_TCK) returns.
const atClkTck = 17

// clockTicks returns the units of utime/stime in /proc/PID/stat per second:
// sysconf(_SC_CLK_TCK), read without cgo from our own auxiliary vector
// (procfs hard-codes 100, right on mainstream kernels but not guaranteed).
var clockTicks = sync.OnceValue(func() float64 {
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return float64(kv[1])
			}
		}
	}
	return 100
})

// cpuSeconds returns utime+stime of pid in seconds.
func (p *procSampler) cpuSeconds(pid int) (float64, error) {
	proc, err := p.fs.Proc(pid)
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d: %w", pid, err)
	}
	st, err := proc.Stat()
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	return float64(st.UTime+st.STime) / p.hz, nil
}

// sample reads CPU time, VmHWM and the open fd count of pid.
func (p *procSampler) sample(pid int) (procSample, error) {
	cpu, err := p.cpuSeconds(pid)
	if err != nil {
		return procSample{}, err
	}
	proc, err := p.fs.Proc(pid)
	if err != nil {
		return procSample{}, fmt.Errorf("read /proc/%d: %w", pid, err)
	}
	status, err := proc.NewStatus()
	if err != nil {
		return procSample{}, fmt.Errorf("read /proc/%d/status: %w", pid, err)
	}
	n, _, err := p.fds.Count(pid)
	if err != nil {
		return procSample{}, fmt.Errorf("count fds of %d: %w", pid, err)
	}
	return procSample{CPUSeconds: cpu, PeakRSS: float64(status.VmHWM), FDs: float64(n)}, nil
}
