package procfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// bpfHint is what a user needs when the BPF counter cannot load.
const bpfHint = "needs root, or CAP_BPF and CAP_PERFMON, and kernel BTF (/sys/kernel/btf/vmlinux); " +
	"the per-process filter needs Linux 6.1+; use --method auto or readdir"

// bpf(2) commands and the attach type of iterators, from <linux/bpf.h>.
const (
	bpfLinkCreate  = 28 // BPF_LINK_CREATE
	bpfIterCreate  = 33 // BPF_ITER_CREATE
	bpfTraceIter   = 28 // BPF_TRACE_ITER
	tidRecordBytes = 4  // task_files writes one __u32 per file
)

// bpfState is the task_file iterator programs of an FS, loaded on first use
// and shared by every count until Close.
type bpfState struct {
	mu   sync.RWMutex
	objs *fdIterObjects // nil until loaded, and after Close
	err  error          // a load error, kept: privileges do not come back
}

// acquire returns the loaded programs with s.mu read-locked (the caller
// calls s.mu.RUnlock), loading them on first use.
func (s *bpfState) acquire() (*fdIterObjects, error) {
	for {
		s.mu.RLock()
		if s.objs != nil {
			return s.objs, nil
		}
		if err := s.err; err != nil {
			s.mu.RUnlock()
			return nil, err
		}
		s.mu.RUnlock()
		s.mu.Lock()
		if s.objs == nil && s.err == nil {
			s.objs, s.err = loadBPF()
		}
		s.mu.Unlock()
	}
}

// load loads the programs unless they are loaded or failed to.
func (s *bpfState) load() {
	if _, err := s.acquire(); err == nil {
		s.mu.RUnlock()
	}
}

// loaded reports whether the programs are loaded.
func (s *bpfState) loaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.objs != nil
}

// fail releases the programs and keeps err for every later count.
func (s *bpfState) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objs != nil {
		_ = s.objs.Close()
	}
	s.objs, s.err = nil, err
}

// close releases the programs; a later count loads them again.
func (s *bpfState) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.objs != nil {
		err = s.objs.Close()
	}
	s.objs, s.err = nil, nil
	return err
}

func loadBPF() (*fdIterObjects, error) {
	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK; later ones
	// to the memory cgroup, where raising the limit fails harmlessly.
	_ = rlimit.RemoveMemlock()
	var objs fdIterObjects
	if err := loadFdIterObjects(&objs, nil); err != nil {
		return nil, &bpfError{op: "load bpf fd counter", err: err}
	}
	return &objs, nil
}

// bpfError is a failure of the BPF counter: errors.Is matches
// ErrBPFUnavailable and the underlying error.
type bpfError struct {
	op  string
	err error
}

func (e *bpfError) Error() string {
	msg := e.err.Error()
	if errors.Is(e.err, unix.EPERM) {
		// cilium/ebpf's message then suggests raising RLIMIT_MEMLOCK,
		// which loadBPF already tried; the missing privilege is the cause.
		msg = unix.EPERM.Error()
	}
	return e.op + ": " + msg + ": " + ErrBPFUnavailable.Error() + " (" + bpfHint + ")"
}

func (e *bpfError) Unwrap() []error { return []error{ErrBPFUnavailable, e.err} }

// bpfCount counts the table of pid (or of its thread tid) with the BPF
// iterator, loading the programs on first use. The FS's PIDs must be the
// caller's: the kernel resolves them in the caller's PID namespace.
func (fs *FS) bpfCount(pid, tid int) (int, error) {
	if !fs.ownPIDs {
		return 0, fmt.Errorf("count %s with bpf: %w (%s is not the proc mount of this process's PID namespace; use --method auto or readdir)",
			fs.fdPath(pid, tid), ErrBPFUnavailable, fs.root)
	}
	objs, err := fs.bpf.acquire()
	if err != nil {
		return 0, err
	}
	var n int
	if tid == 0 || tid == pid {
		n, err = countLeader(objs.CountFiles, pid)
	} else {
		n, err = countThread(objs.TaskFiles, pid, tid)
	}
	fs.bpf.mu.RUnlock()
	if errors.Is(err, unix.E2BIG) || errors.Is(err, unix.EINVAL) {
		// A kernel before 6.1 has no per-task iterator filter: remember,
		// so that auto does not try again on every count.
		fs.bpf.fail(err)
	}
	return n, err
}

// countLeader counts the table of task pid: the link selects that one
// task (a thread ID selects its thread group's leader, or nothing), so the
// iterator walks exactly the files /proc/PID/fd lists, and count_files
// reports the number of the last one.
func countLeader(prog *ebpf.Program, pid int) (int, error) {
	fd, err := openIter(prog, iterTaskInfo{tid: uint32(pid)})
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var buf [16]byte
	got := 0
	for got < len(buf) {
		n, err := readIter(fd, buf[got:])
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
		got += n
	}
	switch got {
	case 8: // no file: only the end record
		return 0, nil
	case 9: // the marker of the first file, then the number of the last
		return int(binary.NativeEndian.Uint64(buf[1:9])) + 1, nil
	}
	return 0, fmt.Errorf("read bpf iterator: %d bytes, want 8 or 9: %w", got, ErrBadDirent)
}

// countThread counts the table of thread tid of process pid: the link
// selects the thread group, whose walk skips the threads that share the
// leader's table, and task_files writes the thread ID of each file.
func countThread(prog *ebpf.Program, pid, tid int) (int, error) {
	fd, err := openIter(prog, iterTaskInfo{pid: uint32(pid)})
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	bp := direntBufPool.Get().(*[]byte)
	defer direntBufPool.Put(bp)
	buf := (*bp)[:len(*bp)/tidRecordBytes*tidRecordBytes]
	own, leader, rest := 0, 0, 0
	for {
		n, err := readIter(fd, buf[rest:])
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
		n += rest
		for i := 0; i+tidRecordBytes <= n; i += tidRecordBytes {
			switch int(binary.NativeEndian.Uint32(buf[i:])) {
			case tid:
				own++
			case pid:
				leader++
			}
		}
		rest = n % tidRecordBytes
		copy(buf, buf[n-rest:n])
	}
	if own > 0 {
		return own, nil
	}
	// Not shown: the thread shares the leader's table (the walk skipped
	// it), has an empty table of its own, or does not exist.
	r, err := kcmp(pid, tid, kcmpFiles)
	if err != nil {
		return 0, pathErr("kcmp", "/proc/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(tid), err)
	}
	if r == 0 {
		return leader, nil
	}
	return 0, nil
}

// iterTaskInfo is union bpf_iter_link_info's task member.
type iterTaskInfo struct {
	tid, pid, pidFD uint32
}

// linkCreateIterAttr is union bpf_attr for BPF_LINK_CREATE of an iterator.
// iterInfo is a pointer, not an integer, so the Go runtime keeps what it
// points to in place and alive (as cilium/ebpf's sys package does).
type linkCreateIterAttr struct {
	progFD, targetFD, attachType, flags uint32
	iterInfo                            unsafe.Pointer
	_                                   [8 - unsafe.Sizeof(uintptr(0))]byte
	iterInfoLen                         uint32
	_                                   uint32
}

// iterCreateAttr is union bpf_attr for BPF_ITER_CREATE.
type iterCreateAttr struct {
	linkFD, flags uint32
}

// openIter attaches prog to a task_file iterator limited by info (cilium/ebpf
// v0.22's link.AttachIter passes only a map FD) and opens one walk of it.
func openIter(prog *ebpf.Program, info iterTaskInfo) (int, error) {
	p := &info
	attr := linkCreateIterAttr{
		progFD:      uint32(prog.FD()),
		attachType:  bpfTraceIter,
		iterInfo:    unsafe.Pointer(p),
		iterInfoLen: uint32(unsafe.Sizeof(info)),
	}
	link, _, errno := unix.Syscall(unix.SYS_BPF, bpfLinkCreate, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if errno != 0 {
		return -1, &bpfError{op: "create bpf iterator link", err: errno}
	}
	defer unix.Close(int(link))
	iattr := iterCreateAttr{linkFD: uint32(link)}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, bpfIterCreate, uintptr(unsafe.Pointer(&iattr)), unsafe.Sizeof(iattr))
	if errno != 0 {
		return -1, &bpfError{op: "create bpf iterator", err: errno}
	}
	return int(fd), nil
}

func readIter(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read bpf iterator: %w", err)
		}
		return n, nil
	}
}

func (fs *FS) loadBPF() error {
	if _, err := fs.bpf.acquire(); err != nil {
		return err
	}
	fs.bpf.mu.RUnlock()
	return nil
}
