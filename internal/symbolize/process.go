package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Process symbolizes user addresses of one process. Call Snapshot while the
// process lives (mappings and files vanish when it exits); snapshots
// accumulate, so libraries loaded later are still found.
type Process struct {
	PID int
	// Exe is the path of the executable, read at the first snapshot.
	Exe      string
	procRoot string
	maps     []Mapping // sorted by Start, unique Start
	bins     map[string]*binEntry
}

type binEntry struct {
	bin *Binary
	err error
}

// NewProcess returns a symbolizer for pid reading procRoot ("" = "/proc").
func NewProcess(procRoot string, pid int) *Process {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return &Process{PID: pid, procRoot: procRoot, bins: map[string]*binEntry{}}
}

// Snapshot reads the process's executable mappings and loads the symbols of
// files not seen before (through /proc/PID/map_files, so deleted or
// replaced binaries still resolve). It fails when the process is gone.
func (p *Process) Snapshot() error {
	if p.Exe == "" {
		if exe, err := os.Readlink(filepath.Join(p.procRoot, strconv.Itoa(p.PID), "exe")); err == nil {
			p.Exe = strings.TrimSuffix(exe, " (deleted)")
		}
	}
	f, err := os.Open(filepath.Join(p.procRoot, strconv.Itoa(p.PID), "maps"))
	if err != nil {
		return fmt.Errorf("read maps of %d: %w", p.PID, err)
	}
	ms, err := parseMaps(f)
	f.Close()
	if err != nil {
		return err
	}
	for _, m := range ms {
		p.add(m)
		if _, seen := p.bins[m.Path]; seen || m.Path == "" || m.Path[0] == '[' {
			continue
		}
		p.bins[m.Path] = p.load(m)
	}
	return nil
}

func (p *Process) load(m Mapping) *binEntry {
	paths := []string{
		filepath.Join(p.procRoot, strconv.Itoa(p.PID), "map_files", fmt.Sprintf("%x-%x", m.Start, m.End)),
		filepath.Join(p.procRoot, strconv.Itoa(p.PID), "root", m.Path),
		m.Path,
	}
	var err error
	for _, path := range paths {
		var f *os.File
		if f, err = os.Open(path); err != nil {
			continue
		}
		var b *Binary
		b, err = OpenBinary(f)
		f.Close()
		if err == nil {
			return &binEntry{bin: b}
		}
	}
	return &binEntry{err: err}
}

// add merges m into the sorted mapping list, replacing a mapping with the
// same start (an munmap+mmap reuse).
func (p *Process) add(m Mapping) {
	i := sort.Search(len(p.maps), func(i int) bool { return p.maps[i].Start >= m.Start })
	if i < len(p.maps) && p.maps[i].Start == m.Start {
		p.maps[i] = m
		return
	}
	p.maps = append(p.maps, Mapping{})
	copy(p.maps[i+1:], p.maps[i:])
	p.maps[i] = m
}

// Mappings returns the executable mappings seen so far, sorted by address.
func (p *Process) Mappings() []Mapping { return p.maps }

// Mapping returns the mapping holding addr.
func (p *Process) Mapping(addr uint64) (Mapping, bool) {
	i := sort.Search(len(p.maps), func(i int) bool { return p.maps[i].End > addr })
	if i < len(p.maps) && p.maps[i].Start <= addr {
		return p.maps[i], true
	}
	return Mapping{}, false
}

// Lookup symbolizes the user address addr. Callers pass a return address
// minus one for every frame but the leaf, so that the call instruction (not
// the next line) is named.
func (p *Process) Lookup(addr uint64) (Frame, bool) {
	m, ok := p.Mapping(addr)
	if !ok {
		return Frame{}, false
	}
	e := p.bins[m.Path]
	if e == nil || e.bin == nil {
		return Frame{}, false
	}
	vaddr, ok := e.bin.FileOffsetToVaddr(addr - m.Start + m.Offset)
	if !ok {
		return Frame{}, false
	}
	return e.bin.Lookup(vaddr)
}
