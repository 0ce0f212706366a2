package symbolize

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mapping is one executable mapping of a process, as /proc/PID/maps lists it.
type Mapping struct {
	Start, End uint64 // address range [Start, End)
	Offset     uint64 // file offset of Start
	Path       string // backing file; "" or "[vdso]" style names for anonymous ones
	Inode      uint64
}

// parseMaps reads /proc/PID/maps text and returns its executable mappings.
func parseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m, ok, err := parseMapsLine(sc.Bytes())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, m)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	return out, nil
}

// parseMapsLine parses "start-end perms offset dev inode path"; ok is false
// for mappings that are not executable.
func parseMapsLine(line []byte) (Mapping, bool, error) {
	f := bytes.Fields(line)
	if len(f) < 5 {
		return Mapping{}, false, fmt.Errorf("maps line %q: too few fields", line)
	}
	if len(f[1]) < 3 || f[1][2] != 'x' {
		return Mapping{}, false, nil
	}
	lo, hi, ok := bytes.Cut(f[0], []byte("-"))
	if !ok {
		return Mapping{}, false, fmt.Errorf("maps line %q: bad range", line)
	}
	var m Mapping
	var err error
	if m.Start, err = strconv.ParseUint(string(lo), 16, 64); err != nil {
		return Mapping{}, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if m.End, err = strconv.ParseUint(string(hi), 16, 64); err != nil {
		return Mapping{}, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if m.Offset, err = strconv.ParseUint(string(f[2]), 16, 64); err != nil {
		return Mapping{}, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if m.Inode, err = strconv.ParseUint(string(f[4]), 10, 64); err != nil {
		return Mapping{}, false, fmt.Errorf("maps line %q: %w", line, err)
	}
	if len(f) > 5 {
		// Paths may contain spaces; " (deleted)" marks a replaced file.
		idx := bytes.Index(line, f[5])
		m.Path = strings.TrimSuffix(string(line[idx:]), " (deleted)")
	}
	return m, m.End > m.Start, nil
}
