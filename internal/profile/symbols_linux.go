package profile

import (
	"github.com/otelbench/otelbench/internal/symbolize"
)

// symbolizers names the frames of every traced process and of the kernel.
type symbolizers struct {
	procRoot string
	procs    map[int]*symbolize.Process
	kernel   *symbolize.Kernel
	kmap     *MappingInfo
}

func newSymbolizers(procRoot string) *symbolizers {
	return &symbolizers{procRoot: procRoot, procs: map[int]*symbolize.Process{}}
}

// snapshot records the mappings of pids while they live; a process that
// already exited keeps what earlier snapshots saw.
func (s *symbolizers) snapshot(pids ...int) {
	for _, pid := range pids {
		p, ok := s.procs[pid]
		if !ok {
			p = symbolize.NewProcess(s.procRoot, pid)
			s.procs[pid] = p
		}
		_ = p.Snapshot()
	}
}

// exe returns the executable path of pid, if a snapshot saw it.
func (s *symbolizers) exe(pid int) string {
	if p := s.procs[pid]; p != nil {
		return p.Exe
	}
	return ""
}

// user symbolizes a user stack of pid, leaf first. Return addresses (all
// frames but the leaf) are looked up one byte back, inside the call.
func (s *symbolizers) user(pid int, addrs []uint64) []Frame {
	p := s.procs[pid]
	out := make([]Frame, 0, len(addrs))
	for i, a := range addrs {
		f := Frame{Addr: a}
		if p != nil {
			pc := a
			if i > 0 {
				pc--
			}
			if sf, ok := p.Lookup(pc); ok {
				f.Function, f.File, f.Line = sf.Function, sf.File, sf.Line
			}
			if m, ok := p.Mapping(a); ok {
				f.Mapping = &MappingInfo{PID: pid, Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path}
			}
		}
		out = append(out, f)
	}
	return out
}

// kernelFrames symbolizes a kernel stack from /proc/kallsyms (read once).
func (s *symbolizers) kernelFrames(addrs []uint64) []Frame {
	if s.kernel == nil {
		k, err := symbolize.LoadKernel("")
		if err != nil {
			k = &symbolize.Kernel{}
		}
		s.kernel = k
		s.kmap = &MappingInfo{Path: "[kernel.kallsyms]"}
	}
	out := make([]Frame, 0, len(addrs))
	for _, a := range addrs {
		f := Frame{Addr: a, Kernel: true, Mapping: s.kmap}
		f.Function, _ = s.kernel.Lookup(a)
		out = append(out, f)
	}
	return out
}
