package profile

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ProfileCPU samples the on-CPU stacks (kernel and user) of the target with
// a cpu-clock perf event at cfg.Freq on every CPU, until ctx is done,
// Duration elapses or the target exits. Every BPF object and perf event is
// freed before it returns.
func ProfileCPU(ctx context.Context, cfg CPUConfig) (*CPUReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Freq == 0 {
		cfg.Freq = DefaultFreq
	}
	if err := preflight(cfg.ProcRoot); err != nil {
		return nil, err
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}

	tr, sess, syms, err := launch(cfg.Target, cfg.ProcRoot, true, cfg.Attached,
		func(pid int) (*cpuSession, error) { return newCPUSession(cfg, pid, cpus) })
	if err != nil {
		return nil, err
	}
	defer sess.close()

	rep := &CPUReport{PID: tr.pid, Command: cfg.Command, Freq: cfg.Freq, Started: time.Now()}
	snap := func() { syms.snapshot(sess.pids()...) }
	tr.wait(ctx, cfg.Duration, snapshotEvery, snap)
	snap()
	sess.detach()
	rep.Elapsed = time.Since(tr.started)
	rep.ExitCode = tr.finish(finishGrace)
	rep.Exe = syms.exe(tr.pid)
	if err := sess.collect(rep, syms); err != nil {
		return nil, err
	}
	return rep, nil
}

// cpuSession owns the sampler program, its maps and one perf event per CPU.
type cpuSession struct {
	cfg    CPUConfig
	pid    int
	coll   *ebpf.Collection
	events []int
	fork   *syscallSession // only for the fork link
}

func newCPUSession(cfg CPUConfig, pid int, cpus []int) (*cpuSession, error) {
	spec, err := loadCpu()
	if err != nil {
		return nil, fmt.Errorf("load BPF spec: %w", err)
	}
	if err := setVars(spec, map[string]any{"target_tgid": uint32(pid), "follow_children": b2u(cfg.FollowChildren)}); err != nil {
		return nil, err
	}
	keep := []string{"on_cpu_sample"}
	if cfg.FollowChildren {
		keep = append(keep, "sched_fork")
	}
	coll, err := loadCollection(spec, keep...)
	if err != nil {
		return nil, err
	}
	s := &cpuSession{cfg: cfg, pid: pid, coll: coll}
	if cfg.FollowChildren {
		if err := coll.Maps["tgids"].Put(uint32(pid), uint8(1)); err != nil {
			s.close()
			return nil, fmt.Errorf("add pid to filter: %w", err)
		}
		s.fork = &syscallSession{}
		if err := s.fork.attach(coll.Programs["sched_fork"], AttachTPBTF, "sched_process_fork"); err != nil {
			s.close()
			return nil, err
		}
		if _, err := addDescendants(coll.Maps["tgids"], cfg.ProcRoot, pid); err != nil {
			s.close()
			return nil, err
		}
	}
	prog := coll.Programs["on_cpu_sample"]
	for _, cpu := range cpus {
		fd, err := openCPUClock(cpu, cfg.Freq)
		if err != nil {
			s.close()
			return nil, err
		}
		s.events = append(s.events, fd)
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
			s.close()
			return nil, fmt.Errorf("attach sampler to cpu %d: %w", cpu, bpfErr(err))
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			s.close()
			return nil, fmt.Errorf("enable perf event on cpu %d: %w", cpu, err)
		}
	}
	return s, nil
}

// openCPUClock opens a disabled software cpu-clock event sampling at freq Hz
// on one CPU, for every task.
func openCPUClock(cpu, freq int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: uint64(freq),
		Bits:   unix.PerfBitFreq | unix.PerfBitDisabled,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		hint := ""
		if err == unix.EACCES || err == unix.EPERM {
			hint = " (needs CAP_PERFMON, or kernel.perf_event_paranoid <= -1)"
		}
		if err == unix.ENOENT || err == unix.EOPNOTSUPP {
			hint = " (the kernel lacks the software cpu-clock event)"
		}
		return -1, fmt.Errorf("open cpu-clock perf event on cpu %d: %w%s", cpu, err, hint)
	}
	return fd, nil
}

func (s *cpuSession) pids() []int {
	if !s.cfg.FollowChildren {
		return []int{s.pid}
	}
	return readTgids(s.coll.Maps["tgids"])
}

func (s *cpuSession) detach() {
	for _, fd := range s.events {
		_ = unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, 0)
		_ = unix.Close(fd)
	}
	s.events = nil
	if s.fork != nil {
		s.fork.detach()
	}
}

func (s *cpuSession) close() {
	s.detach()
	if s.coll != nil {
		s.coll.Close()
		s.coll = nil
	}
}

func (s *cpuSession) collect(rep *CPUReport, syms *symbolizers) error {
	stacks := s.coll.Maps["stacks"]
	kcache := map[int32][]Frame{}
	ucache := map[[2]int32][]Frame{}
	var k cpuSampleKey
	var n uint64
	it := s.coll.Maps["samples"].Iterate()
	for it.Next(&k, &n) {
		kf, ok := kcache[k.Kstack]
		if !ok && k.Kstack >= 0 {
			if addrs, err := readStack(stacks, k.Kstack); err == nil {
				kf = syms.kernelFrames(addrs)
			}
			kcache[k.Kstack] = kf
		}
		uk := [2]int32{int32(k.Tgid), k.Ustack}
		uf, ok := ucache[uk]
		if !ok && k.Ustack >= 0 {
			if addrs, err := readStack(stacks, k.Ustack); err == nil {
				uf = syms.user(int(k.Tgid), addrs)
			}
			ucache[uk] = uf
		}
		frames := make([]Frame, 0, len(kf)+len(uf))
		frames = append(append(frames, kf...), uf...)
		rep.Samples = append(rep.Samples, CPUSample{PID: int(k.Tgid), TID: int(k.Tid), Count: n, Frames: frames})
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read samples: %w", err)
	}
	rep.Children = append(rep.Children, followedChildren(s.coll, s.pid, s.cfg.FollowChildren)...)
	rep.Lost = lostCounts(s.coll)
	return nil
}

// onlineCPUs lists the online CPUs from sysfs.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("list online cpus: %w", err)
	}
	return parseCPUList(string(b))
}

// parseCPUList parses the kernel's CPU list format, "0-3,5,7-8".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("parse cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("parse cpu list %q: %w", s, err)
			}
		}
		if b < a || b-a > 1<<16 {
			return nil, fmt.Errorf("parse cpu list %q: bad range %q", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse cpu list %q: empty", s)
	}
	return out, nil
}
