package syscalltab

import (
	"fmt"
	"runtime"
)

// Table maps the syscall numbers of one architecture to names.
type Table struct {
	arch   string
	names  map[int]string
	byName map[string]int
}

// ForArch returns the table for a GOARCH value ("amd64" or "arm64") and false
// for architectures without a table.
func ForArch(goarch string) (*Table, bool) {
	var names map[int]string
	switch goarch {
	case "amd64":
		names = amd64Names
	case "arm64":
		names = arm64Names
	default:
		return nil, false
	}
	t := &Table{arch: goarch, names: names, byName: make(map[string]int, len(names))}
	for nr, name := range names {
		t.byName[name] = nr
	}
	return t, true
}

// Native returns the table of the architecture this program runs on; on an
// architecture without a table it returns an empty table, whose names are
// "syscall_N".
func Native() *Table {
	if t, ok := ForArch(runtime.GOARCH); ok {
		return t
	}
	return &Table{arch: runtime.GOARCH, names: map[int]string{}, byName: map[string]int{}}
}

// Arch returns the GOARCH value the table is for.
func (t *Table) Arch() string { return t.arch }

// Name returns the name of syscall nr, or "syscall_NR" when it is unknown.
func (t *Table) Name(nr int) string {
	if n, ok := t.names[nr]; ok {
		return n
	}
	return fmt.Sprintf("syscall_%d", nr)
}

// Number returns the number of the named syscall and whether it exists on
// this architecture.
func (t *Table) Number(name string) (int, bool) {
	nr, ok := t.byName[name]
	return nr, ok
}

// Len returns how many syscalls the table names.
func (t *Table) Len() int { return len(t.names) }
