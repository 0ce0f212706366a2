package procfd

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// kcmpFiles is KCMP_FILES from <linux/kcmp.h> (x/sys/unix does not define
// it): kcmp(2) then compares the tasks' files_struct, their descriptor table.
const kcmpFiles = 2

// Tables returns the descriptor tables of process pid, the process's own
// table (the one /proc/PID/fd shows) first, then one per further table in
// order of their first thread. Threads that exit while Tables runs are left
// out.
func (fs *FS) Tables(pid int, m Method) ([]Table, Grouping, error) {
	tids, err := fs.TIDs(pid)
	if errors.Is(err, ErrNoProcess) && !fs.procfs {
		tids, err = []int{pid}, nil // a fixture without task/: one thread
	}
	if err != nil {
		return nil, "", err
	}
	n, used, err := fs.CountMethod(pid, m)
	if err != nil {
		return nil, "", err
	}
	tables := []Table{{FDs: n, Method: used}}
	grouping := GroupingKcmp
	if !fs.ownPIDs || !kcmpWorks(pid) {
		grouping = GroupingCount
	}
	for _, tid := range tids {
		i, err := fs.tableOf(pid, tid, tables, m, grouping)
		switch {
		case errors.Is(err, ErrNoProcess) || errors.Is(err, unix.ESRCH):
			continue // the thread exited
		case err != nil:
			return nil, "", err
		case i >= 0:
			tables[i].TIDs = append(tables[i].TIDs, tid)
			continue
		}
		c, used, err := fs.CountTask(pid, tid, m)
		if errors.Is(err, ErrNoProcess) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		tables = append(tables, Table{TIDs: []int{tid}, FDs: c, Method: used})
	}
	for i := range tables {
		slices.Sort(tables[i].TIDs)
	}
	return tables, grouping, nil
}

// tableOf returns the index of the table thread tid uses, or -1 for a
// table not seen yet. Table 0 is the leader's (/proc/PID/fd); each other
// table is represented by its first thread.
func (fs *FS) tableOf(pid, tid int, tables []Table, m Method, g Grouping) (int, error) {
	if tid == pid {
		return 0, nil
	}
	if g == GroupingCount {
		c, _, err := fs.CountTask(pid, tid, m)
		if err != nil {
			return -1, err
		}
		for i, t := range tables {
			if c == t.FDs {
				return i, nil
			}
		}
		return -1, nil
	}
	for i, t := range tables {
		rep := pid
		if i > 0 {
			rep = t.TIDs[0]
		}
		r, err := kcmp(rep, tid, kcmpFiles)
		if err != nil {
			return -1, fmt.Errorf("kcmp %d %d: %w", rep, tid, err)
		}
		if r == 0 {
			return i, nil
		}
	}
	return -1, nil
}

// kcmpWorks reports whether kcmp(2) can compare pid with itself.
func kcmpWorks(pid int) bool {
	r, err := kcmp(pid, pid, kcmpFiles)
	return err == nil && r == 0
}

// kcmp returns 0 when the resources are the same, 1 or 2 for an order, 3
// when they differ but cannot be ordered.
func kcmp(pid1, pid2, typ int) (int, error) {
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, uintptr(pid1), uintptr(pid2), uintptr(typ), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
