package procfd

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// direntBufSize is the getdents64 buffer. Larger buffers mean fewer system
// calls; each record of an fd directory is 24-32 bytes, so 64 KiB holds about
// 2,500 descriptors per call (os.File.Readdirnames uses 8 KiB).
const direntBufSize = 64 << 10

var direntBufPool = sync.Pool{New: func() any {
	b := make([]byte, direntBufSize)
	return &b
}}

func newFS(root string, opts Options) (*FS, error) {
	var sfs unix.Statfs_t
	if err := retryEINTR(func() error { return unix.Statfs(root, &sfs) }); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", root, err)
	}
	fs := &FS{root: root, fsType: int64(sfs.Type), procfs: int64(sfs.Type) == ProcSuperMagic, workers: opts.Workers, bpf: &bpfState{}}
	if fs.workers == 0 {
		fs.workers = DefaultWorkers
	}
	if fs.procfs {
		fs.probeSelf()
	}
	return fs, nil
}

// probeSelf learns, once per mount, whether the mount's PIDs are ours and
// whether the kernel reports descriptor counts in st_size: it opens
// root/self/fd and fstats that descriptor, so the table it looks at holds at
// least one open descriptor and a size of 0 can only mean "not supported".
func (fs *FS) probeSelf() {
	self := fs.root + "/self"
	if link, err := os.Readlink(self); err == nil && link == strconv.Itoa(os.Getpid()) {
		fs.ownPIDs = true
	}
	fd, err := openDir(self + "/fd")
	if err != nil {
		// Another PID namespace's mount has no "self" for us: unknown, so
		// trust positive sizes (they are only ever counts on procfs).
		fs.statSize = true
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil {
		fs.statProbed = true
		fs.statSize = st.Size > 0
	}
}

func (fs *FS) count(pid, tid int, m Method) (int, Method, error) {
	if pid <= 0 || tid < 0 {
		return 0, m, fmt.Errorf("count pid %d tid %d: %w", pid, tid, ErrNoProcess)
	}
	path := fs.fdPath(pid, tid)
	switch m {
	case MethodStat:
		if !fs.procfs {
			return 0, MethodStat, fmt.Errorf("stat %s: %w (%s has filesystem type %#x, procfs is %#x; use --method auto or readdir)",
				path, ErrNotProcfs, fs.root, fs.fsType, ProcSuperMagic)
		}
		if fs.statProbed && !fs.statSize {
			return 0, MethodStat, fmt.Errorf("stat %s: %w", path, ErrStatUnsupported)
		}
		n, err := statCount(path)
		return n, MethodStat, err
	case MethodReaddir:
		n, err := fs.readdirCount(path)
		return n, MethodReaddir, err
	case MethodBPF:
		n, err := fs.bpfCount(pid, tid)
		if err == nil && n == 0 {
			// A zombie, no such process, or a thread ID (which leads no
			// thread group): let the directory say which.
			r, rerr := fs.readdirCount(path)
			if rerr != nil {
				return 0, MethodBPF, rerr
			}
			if r > 0 {
				return r, MethodReaddir, nil
			}
		}
		return n, MethodBPF, err
	case MethodAuto, "":
		// Where the kernel reports sizes, a size of 0 is the count (or a
		// zombie, or an error the fallback reports); where it does not
		// (before Linux 6.2) stat is skipped.
		noSizes := fs.statProbed && !fs.statSize
		if fs.procfs && !noSizes {
			n, err := statCount(path)
			if err != nil || n > 0 {
				return n, MethodStat, err
			}
		}
		useBPF := fs.procfs && noSizes && fs.ownPIDs
		if useBPF && fs.bpf.loaded() {
			// No stat size: count in the kernel. A count of 0 (or an
			// error) is left to the directory, cheap when it is empty.
			if n, err := fs.bpfCount(pid, tid); err == nil && n > 0 {
				return n, MethodBPF, nil
			}
		}
		n, err := fs.readdirCount(path)
		if useBPF && err == nil && n >= BPFLoadFDs && !fs.bpf.loaded() {
			// A table this large costs about as much to read as the BPF
			// programs cost to load once: load them for the next counts.
			// Where they cannot load (no privilege, no BTF) the error is
			// kept and auto stays with readdir.
			fs.bpf.load()
		}
		if err != nil && fs.procfs && fs.statProbed && fs.statSize && errors.Is(err, ErrPermission) {
			// The directory is refused (another user's process) but the
			// kernel reports sizes and the size was 0: that is the count.
			return 0, MethodStat, nil
		}
		return n, MethodReaddir, err
	}
	return 0, m, fmt.Errorf("%w: %q", ErrInvalidMethod, string(m))
}

// fdPath returns root/pid/fd, or root/pid/task/tid/fd when tid > 0.
func (fs *FS) fdPath(pid, tid int) string {
	b := make([]byte, 0, len(fs.root)+48)
	b = append(b, fs.root...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(pid), 10)
	if tid > 0 {
		b = append(b, "/task/"...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	b = append(b, "/fd"...)
	return string(b)
}

// statCount returns st_size of the directory at path.
func statCount(path string) (int, error) {
	var st unix.Stat_t
	if err := retryEINTR(func() error { return unix.Stat(path, &st) }); err != nil {
		return 0, pathErr("stat", path, err)
	}
	return int(st.Size), nil
}

// countFD counts the entries of the open directory fd, reading it through
// buf.
func countFD(fd int, path string, buf []byte) (int, error) {
	total := 0
	for {
		n, err := getdents(fd, buf)
		if err != nil {
			return total, pathErr("getdents", path, err)
		}
		if n <= 0 {
			return total, nil
		}
		c, err := countDirents(buf[:n])
		total += c
		if err != nil {
			return total, fmt.Errorf("getdents %s: %w", path, err)
		}
	}
}

func openDir(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func getdents(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Getdents(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

func closeFD(fd int) { _ = unix.Close(fd) }

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// pathErr wraps a system call error with the package's sentinel for it, and
// keeps the errno in the chain.
func pathErr(op, path string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ESRCH):
		return &syscallError{op: op, path: path, kind: ErrNoProcess, errno: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return &syscallError{op: op, path: path, kind: ErrPermission, errno: err,
			hint: "reading another user's fd directory needs ptrace access: run as root, or count with --method auto or stat on Linux 6.2+"}
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

// syscallError is a system call on path that failed for a reason the
// package names with a sentinel (kind); errors.Is matches both kind and the
// errno.
type syscallError struct {
	op, path    string
	kind, errno error
	hint        string
}

func (e *syscallError) Error() string {
	s := e.op + " " + e.path + ": " + e.kind.Error()
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

func (e *syscallError) Unwrap() []error { return []error{e.kind, e.errno} }
