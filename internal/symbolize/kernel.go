package symbolize

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// DefaultKallsyms is where the kernel lists its symbols.
const DefaultKallsyms = "/proc/kallsyms"

// Kernel symbolizes kernel addresses from a kallsyms listing.
type Kernel struct {
	syms []symbol
}

// LoadKernel reads path ("" = DefaultKallsyms). Without root the kernel
// shows zero addresses; then the result has no symbols and frames stay
// unnamed.
func LoadKernel(path string) (*Kernel, error) {
	if path == "" {
		path = DefaultKallsyms
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open kallsyms: %w", err)
	}
	defer f.Close()
	return parseKallsyms(f)
}

// parseKallsyms parses "address type name [module]" lines, keeping text
// symbols (types t/T/w/W).
func parseKallsyms(r io.Reader) (*Kernel, error) {
	k := &Kernel{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		switch f[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		k.syms = append(k.syms, symbol{name: f[2], addr: addr})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	sort.Slice(k.syms, func(i, j int) bool { return k.syms[i].addr < k.syms[j].addr })
	return k, nil
}

// Len returns the number of symbols.
func (k *Kernel) Len() int { return len(k.syms) }

// Lookup returns the name of the kernel function holding addr.
func (k *Kernel) Lookup(addr uint64) (string, bool) {
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr }) - 1
	if i < 0 {
		return "", false
	}
	return k.syms[i].name, true
}
