package procfd

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// PIDs returns the IDs of the processes under the root, in directory order
// (ascending on procfs).
func (fs *FS) PIDs() ([]int, error) {
	return numericEntries(fs.root, make([]int, 0, 512))
}

// TIDs returns the thread IDs of process pid (root/pid/task).
func (fs *FS) TIDs(pid int) ([]int, error) {
	return numericEntries(fs.root+"/"+strconv.Itoa(pid)+"/task", nil)
}

// Comm returns the command name of process pid (root/pid/comm, without the
// trailing newline), or of its thread tid when tid > 0.
func (fs *FS) Comm(pid, tid int) (string, error) {
	p := fs.root + "/" + strconv.Itoa(pid)
	if tid > 0 {
		p += "/task/" + strconv.Itoa(tid)
	}
	b, err := os.ReadFile(p + "/comm")
	if err != nil {
		return "", pathErr("read", p+"/comm", err)
	}
	return string(bytes.TrimSuffix(b, []byte("\n"))), nil
}

func numericEntries(dir string, dst []int) ([]int, error) {
	fd, err := openDir(dir)
	if err != nil {
		return dst, pathErr("open", dir, err)
	}
	defer closeFD(fd)
	bp := direntBufPool.Get().(*[]byte)
	defer direntBufPool.Put(bp)
	for {
		n, err := getdents(fd, *bp)
		if err != nil {
			return dst, pathErr("getdents", dir, err)
		}
		if n <= 0 {
			return dst, nil
		}
		if dst, err = appendNumericNames(dst, (*bp)[:n]); err != nil {
			return dst, fmt.Errorf("getdents %s: %w", dir, err)
		}
	}
}
