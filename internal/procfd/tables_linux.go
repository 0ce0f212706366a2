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
		same, ok := -1, true
		for i := range tables {
			if i == 0 && len(tables[0].TIDs) == 0 && tid == pid {
				same = 0 // the leader's table is /proc/PID/fd
				break
			}
			rep := pid
			if i > 0 {
				rep = tables[i].TIDs[0]
			}
			eq, err := fs.sameTable(pid, rep, tid, tables[i].FDs, m, grouping)
			if err != nil {
				ok = false // the thread went away
				break
			}
			if eq {
				same = i
				break
			}
		}
		switch {
		case !ok:
		case same >= 0:
			tables[same].TIDs = append(tables[same].TIDs, tid)
		default:
			c, used, err := fs.CountTask(pid, tid, m)
			if errors.Is(err, ErrNoProcess) {
				continue
			}
			if err != nil {
				return nil, "", err
			}
			tables = append(tables, Table{TIDs: []int{tid}, FDs: c, Method: used})
		}
	}
	for i := range tables {
		slices.Sort(tables[i].TIDs)
	}
	return tables, grouping, nil
}

// sameTable reports whether thread tid uses the table of thread rep, whose
// count is repFDs.
func (fs *FS) sameTable(pid, rep, tid, repFDs int, m Method, g Grouping) (bool, error) {
	if g == GroupingKcmp {
		r, err := kcmp(rep, tid, kcmpFiles)
		if err != nil {
			return false, fmt.Errorf("kcmp %d %d: %w", rep, tid, err)
		}
		return r == 0, nil
	}
	c, _, err := fs.CountTask(pid, tid, m)
	if err != nil {
		return false, err
	}
	return c == repFDs, nil
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
