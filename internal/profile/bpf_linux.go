package profile

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Capability numbers from linux/capability.h (CAP_BPF and CAP_PERFMON came
// with Linux 5.8; before that CAP_SYS_ADMIN covered both).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// preflight readies a BPF trace of processes seen through procRoot: the privileges to load
// it, no memlock limit in the way, and the target's PID namespace ours.
func preflight(procRoot string) error {
	if err := checkPrivileges(); err != nil {
		return err
	}
	removeMemlock()
	return checkPIDNamespace(procRoot)
}

// checkPrivileges fails with ErrPermission unless this process may load
// tracing BPF programs: CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON.
func checkPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	eff := uint64(data[0].Effective) | uint64(data[1].Effective)<<32
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	return fmt.Errorf("load BPF as uid %d: %w", os.Geteuid(), ErrPermission)
}

// checkPIDNamespace fails unless this process sees the host's PIDs: BPF
// filters on the kernel's global tgid, which a container's PID namespace
// hides (/proc/self/status lists one NSpid per namespace level).
func checkPIDNamespace(procRoot string) error {
	if procRoot == "" {
		procRoot = "/proc"
	}
	b, err := os.ReadFile(procRoot + "/self/status")
	if err != nil {
		return fmt.Errorf("read own status: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok && len(strings.Fields(rest)) > 1 {
			return errors.New("otelbench runs in a nested PID namespace, where PIDs differ from the kernel's: run it in the host PID namespace (docker run --pid=host, or on the host)")
		}
	}
	return nil
}

// checkKernel fails with ErrKernelTooOld when task storage (5.11) is
// missing; the tracepoint programs themselves are checked when they load.
func checkKernel() error {
	if err := features.HaveMapType(ebpf.TaskStorage); err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			return fmt.Errorf("probe task storage: %w", ErrKernelTooOld)
		}
		return fmt.Errorf("probe task storage: %w", bpfErr(err))
	}
	return nil
}

// removeMemlock lifts RLIMIT_MEMLOCK for kernels before 5.11 that charge BPF
// memory to it. Newer kernels charge the memory cgroup, and a container may
// forbid raising the limit; neither is fatal.
func removeMemlock() { _ = rlimit.RemoveMemlock() }

// bpfErr adds the fix to permission errors.
func bpfErr(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w: %w", err, ErrPermission)
	}
	return err
}

// attachTracepoint attaches prog to the named tracepoint (sys_enter,
// sys_exit, sched_process_fork) as tp_btf or raw_tp.
func attachTracepoint(prog *ebpf.Program, mode AttachMode, name string) (link.Link, error) {
	var l link.Link
	var err error
	if mode == AttachRawTP {
		l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: prog})
	} else {
		l, err = link.AttachTracing(link.TracingOptions{Program: prog})
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("attach %s tracepoint %s: %w (is the tracepoint in this kernel? try --attach raw_tp)", mode, name, err)
		}
		return nil, fmt.Errorf("attach %s tracepoint %s: %w", mode, name, bpfErr(err))
	}
	return l, nil
}

// loadCollection loads spec keeping only the named programs.
func loadCollection(spec *ebpf.CollectionSpec, keep ...string) (*ebpf.Collection, error) {
	want := map[string]bool{}
	for _, k := range keep {
		want[k] = true
	}
	for name := range spec.Programs {
		if !want[name] {
			delete(spec.Programs, name)
		}
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load BPF programs: %+v", ve)
		}
		if errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("load BPF programs: %w: %w", err, ErrKernelTooOld)
		}
		return nil, fmt.Errorf("load BPF programs: %w", bpfErr(err))
	}
	return coll, nil
}

// setVars sets rodata variables of spec before loading.
func setVars(spec *ebpf.CollectionSpec, vars map[string]any) error {
	for name, v := range vars {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("bpf variable %s missing", name)
		}
		if err := vs.Set(v); err != nil {
			return fmt.Errorf("set bpf variable %s: %w", name, err)
		}
	}
	return nil
}

// Indexes in the counters map (enum counter in common.bpf.h).
const ctrCalls = 5

// readCounters sums the per-CPU counters map.
func readCounters(m *ebpf.Map) map[string]uint64 {
	names := []string{"stack errors (stack map full or unwinding failed)", "stack samples dropped (count map full)", "task storage errors", "syscalls with out-of-range numbers", "children followed", "calls"}
	out := map[string]uint64{}
	for i, name := range names {
		if n := readCounter(m, uint32(i)); n > 0 {
			out[name] = n
		}
	}
	return out
}

// readCounter sums one per-CPU counter (0 if it cannot be read).
func readCounter(m *ebpf.Map, i uint32) uint64 {
	var vals []uint64
	if err := m.Lookup(i, &vals); err != nil {
		return 0
	}
	var n uint64
	for _, v := range vals {
		n += v
	}
	return n
}

// readTgids lists the processes in the followed set.
func readTgids(m *ebpf.Map) []int {
	var out []int
	var k uint32
	var v uint8
	it := m.Iterate()
	for it.Next(&k, &v) {
		out = append(out, int(k))
	}
	return out
}

// readStack returns the addresses of a stack map entry, leaf first.
func readStack(m *ebpf.Map, id int32) ([]uint64, error) {
	var raw [127]uint64
	if err := m.Lookup(uint32(id), &raw); err != nil {
		return nil, err
	}
	n := 0
	for n < len(raw) && raw[n] != 0 {
		n++
	}
	return raw[:n], nil
}

// addRecursionMisses records in lost how often the kernel skipped the
// programs of coll because another BPF program was running on the CPU (each
// skip is a syscall or sample not counted).
func addRecursionMisses(coll *ebpf.Collection, lost map[string]uint64) {
	var n uint64
	for _, p := range coll.Programs {
		if st, err := p.Stats(); err == nil {
			n += st.RecursionMisses
		}
	}
	if n > 0 {
		lost["events skipped by the kernel (BPF recursion)"] = n
	}
}

// followedChildren lists the processes coll followed besides the target pid: none unless the
// trace followed children.
func followedChildren(coll *ebpf.Collection, pid int, follow bool) []int {
	if !follow {
		return nil
	}
	var out []int
	for _, p := range readTgids(coll.Maps["tgids"]) {
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

// lostCounts is what coll's trace failed to count: its counters map less the counters that
// are figures rather than losses (children followed, and drop's), and the kernel's recursion
// skips.
func lostCounts(coll *ebpf.Collection, drop ...string) map[string]uint64 {
	lost := readCounters(coll.Maps["counters"])
	delete(lost, "children followed")
	for _, name := range drop {
		delete(lost, name)
	}
	addRecursionMisses(coll, lost)
	return lost
}
