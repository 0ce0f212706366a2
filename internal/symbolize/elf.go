package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Frame is one symbolized stack frame.
type Frame struct {
	Function string // "" when unknown
	File     string // source file, when the binary has line tables (Go)
	Line     int
}

type symbol struct {
	name       string
	addr, size uint64
}

// Binary holds the symbol tables of one ELF file.
type Binary struct {
	loads []elf.ProgHeader // PT_LOAD segments: file offset -> virtual address
	syms  []symbol         // sorted by addr
	gotab *gosym.Table     // non-nil for Go binaries
}

// OpenBinary reads the symbol tables of the ELF file in r. A file without
// symbols is not an error: its frames stay unnamed.
func OpenBinary(r io.ReaderAt) (*Binary, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("parse elf: %w", err)
	}
	defer f.Close()
	b := &Binary{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			b.loads = append(b.loads, p.ProgHeader)
		}
	}
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := get()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return nil, fmt.Errorf("read symbols: %w", err)
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				b.syms = append(b.syms, symbol{name: s.Name, addr: s.Value, size: s.Size})
			}
		}
	}
	sort.Slice(b.syms, func(i, j int) bool { return b.syms[i].addr < b.syms[j].addr })
	b.gotab = goTable(f)
	return b, nil
}

// goTable returns the pclntab-backed table of a Go binary, or nil.
func goTable(f *elf.File) *gosym.Table {
	sec := f.Section(".gopclntab")
	text := f.Section(".text")
	if sec == nil || text == nil {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil
	}
	return tab
}

// FileOffsetToVaddr maps a file offset to the ELF virtual address the linker
// gave it, via the PT_LOAD segment holding it.
func (b *Binary) FileOffsetToVaddr(off uint64) (uint64, bool) {
	for _, p := range b.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// Lookup returns the frame at ELF virtual address vaddr.
func (b *Binary) Lookup(vaddr uint64) (Frame, bool) {
	if b.gotab != nil {
		if file, line, fn := b.gotab.PCToLine(vaddr); fn != nil {
			return Frame{Function: fn.Name, File: file, Line: line}, true
		}
	}
	i := sort.Search(len(b.syms), func(i int) bool { return b.syms[i].addr > vaddr }) - 1
	if i < 0 {
		return Frame{}, false
	}
	s := b.syms[i]
	if s.size != 0 && vaddr >= s.addr+s.size {
		return Frame{}, false
	}
	return Frame{Function: s.name}, true
}
