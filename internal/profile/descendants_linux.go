package profile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf"
)

// addDescendants puts the processes already descended from pid into the
// followed set m: the fork hook only sees children born after it attached.
// It returns how many it added.
func addDescendants(m *ebpf.Map, procRoot string, pid int) (int, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	parents, err := readParents(procRoot)
	if err != nil {
		return 0, err
	}
	kids := map[int][]int{}
	for p, pp := range parents {
		kids[pp] = append(kids[pp], p)
	}
	added := 0
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			if seen[k] {
				continue
			}
			seen[k] = true
			queue = append(queue, k)
			if err := m.Put(uint32(k), uint8(1)); err != nil {
				return added, fmt.Errorf("follow child %d: %w", k, err)
			}
			added++
		}
	}
	return added, nil
}

// readParents maps every process in procRoot to its parent.
func readParents(procRoot string) (map[int]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make(map[int]int, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		if ppid, ok := parseStatPPID(b); ok {
			out[pid] = ppid
		}
	}
	return out, nil
}

// parseStatPPID returns field 4 of /proc/PID/stat. The command name (field
// 2) is in parentheses and may itself contain spaces and parentheses, so
// parsing starts after the last ')'.
func parseStatPPID(b []byte) (int, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
