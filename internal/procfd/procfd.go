package procfd

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Method says how a count was obtained.
type Method string

// Counting methods.
const (
	// MethodAuto picks MethodStat where it is valid and MethodReaddir otherwise.
	MethodAuto Method = "auto"
	// MethodStat reads st_size of the fd directory (procfs, Linux 6.2+).
	MethodStat Method = "stat"
	// MethodReaddir counts the fd directory's entries with getdents64.
	MethodReaddir Method = "readdir"
	// MethodBPF counts the open files of the task in the kernel with a BPF
	// task_file iterator (Linux 6.1+, root or CAP_BPF and CAP_PERFMON):
	// no dentry per descriptor, no /proc at all.
	MethodBPF Method = "bpf"
)

// Defaults.
const (
	// DefaultProcRoot is where procfs is mounted.
	DefaultProcRoot = "/proc"
	// DefaultMethod is the counting method used when none is given.
	DefaultMethod = MethodAuto
)

// ProcSuperMagic is the f_type statfs(2) reports for procfs (PROC_SUPER_MAGIC).
const ProcSuperMagic = 0x9fa0

// Errors returned (wrapped) by this package; test with errors.Is.
var (
	// ErrNoProcess: the process (or thread) does not exist, or exited.
	ErrNoProcess = errors.New("no such process")
	// ErrPermission: the descriptor directory could not be read. The
	// underlying errno (EACCES, EPERM) is wrapped too, so
	// errors.Is(err, fs.ErrPermission) holds as well.
	ErrPermission = errors.New("permission denied")
	// ErrNotProcfs: MethodStat was forced on a directory that is not procfs.
	ErrNotProcfs = errors.New("not a procfs mount")
	// ErrStatUnsupported: MethodStat was forced but this kernel does not
	// report descriptor counts in st_size (it needs Linux 6.2+).
	ErrStatUnsupported = errors.New("kernel does not report fd counts in stat size (needs Linux 6.2+)")
	// ErrBadDirent: getdents64 returned a malformed record.
	ErrBadDirent = errors.New("malformed dirent record")
	// ErrInvalidConfig: Config.Validate or NewFSOptions refused a setting.
	ErrInvalidConfig = errors.New("invalid fdcount configuration")
	// ErrInvalidMethod: a method name other than auto, stat or readdir.
	ErrInvalidMethod = errors.New("invalid method (want auto, stat, readdir or bpf)")
	// ErrBPFUnavailable: MethodBPF was forced but the BPF counter cannot
	// run here (no privilege, no kernel BTF, a kernel before 6.1, or a proc
	// mount of another PID namespace). The error says which and how to fix it.
	ErrBPFUnavailable = errors.New("bpf fd counter unavailable")
	// ErrNotSupported: counting descriptors needs Linux.
	ErrNotSupported = errors.New("counting file descriptors is only supported on Linux")
)

// ParseMethod returns the Method named s ("" means DefaultMethod).
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case "":
		return DefaultMethod, nil
	case MethodAuto, MethodStat, MethodReaddir, MethodBPF:
		return m, nil
	}
	return "", fmt.Errorf("%w: %q", ErrInvalidMethod, s)
}

// String returns the method name.
func (m Method) String() string { return string(m) }

// Set implements pflag.Value so a Method binds straight to a flag.
func (m *Method) Set(s string) error {
	v, err := ParseMethod(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type implements pflag.Value.
func (m *Method) Type() string { return "method" }

// FS is a proc mount whose processes' descriptors can be counted.
type FS struct {
	root string
	// procfs is true when root is a procfs mount (statfs f_type 0x9fa0):
	// only then does st_size of an fd directory mean a count.
	procfs bool
	fsType int64 // statfs f_type of root
	// statSize is true when the kernel is known to report counts in st_size
	// (probed once on the caller's own fd directory, which is never empty
	// while the probe holds it open).
	statSize   bool
	statProbed bool // statSize was measured, not assumed
	// ownPIDs is true when the mount's PIDs are the caller's: root/self
	// names os.Getpid(). Only then can kcmp(2) compare its tasks.
	ownPIDs bool
	// workers is how many goroutines read one large fd directory.
	workers int
	// bpf holds the BPF counter's programs, loaded on first use and shared
	// by copies of the FS; Close releases them.
	bpf *bpfState
}

// Options configures an FS beyond its root.
type Options struct {
	// Workers is how many goroutines read one large procfs fd directory at
	// once with MethodReaddir (0 means DefaultWorkers, which reads it
	// sequentially). Parallel readers shorten the wall-clock time of a
	// count when CPUs are idle; they do not reduce its CPU time, which is
	// the kernel's per-entry dcache work (see readdirCount).
	Workers int
}

// BPFLoadFDs is the table size at which MethodAuto, on a kernel that does
// not report counts in stat sizes, loads the BPF counter for the counts that
// follow: loading takes 20-60 ms on the machine of docs/benchmarks/fdcount.md,
// about what reading a directory of 10,000 descriptors takes there, and each
// later count of such a table is then about 10x cheaper. Smaller tables are
// read until the programs are loaded (by a large table, MethodBPF, or
// LoadBPF).
const BPFLoadFDs = 10000

// DefaultWorkers reads an fd directory with one reader: on the busy 2-core
// machine the benchmarks ran on, more readers did not shorten a count
// (docs/benchmarks/fdcount.md).
const DefaultWorkers = 1

// MaxWorkers caps Options.Workers: past a few readers the kernel's locks on
// the one task serialise them.
const MaxWorkers = 8

// NewFS returns an FS for the proc mount at procRoot ("" means
// DefaultProcRoot). It runs statfs once to decide whether the mount is
// procfs; a directory that is not procfs is accepted and counted with
// MethodReaddir (fixtures laid out as <root>/<pid>/fd/<n>).
func NewFS(procRoot string) (*FS, error) {
	return NewFSOptions(procRoot, Options{})
}

// NewFSOptions is NewFS with Options.
func NewFSOptions(procRoot string, opts Options) (*FS, error) {
	if procRoot == "" {
		procRoot = DefaultProcRoot
	}
	if opts.Workers < 0 || opts.Workers > MaxWorkers {
		return nil, fmt.Errorf("%w: workers %d not in 0..%d", ErrInvalidConfig, opts.Workers, MaxWorkers)
	}
	return newFS(procRoot, opts)
}

// Close releases the BPF programs MethodBPF (or MethodAuto on a kernel
// without stat sizes) loaded; the FS stays usable and loads them again if
// needed. An FS that never counted with BPF holds nothing to release.
func (fs *FS) Close() error {
	if fs.bpf == nil {
		return nil
	}
	return fs.bpf.close()
}

// LoadBPF loads the BPF counter now (it is otherwise loaded on first use), so
// that MethodAuto uses it where stat sizes are missing. It returns an error
// wrapping ErrBPFUnavailable when it cannot load; auto then reads directories.
func (fs *FS) LoadBPF() error { return fs.loadBPF() }

// Root returns the directory the FS reads.
func (fs *FS) Root() string { return fs.root }

// IsProcfs reports whether the root is a real procfs mount.
func (fs *FS) IsProcfs() bool { return fs.procfs }

// StatSizeSupported reports whether the kernel was seen to report descriptor
// counts in st_size (Linux 6.2+).
func (fs *FS) StatSizeSupported() bool { return fs.statSize }

// Count returns the number of open descriptors of process pid and the method
// used (MethodAuto's choice).
func (fs *FS) Count(pid int) (int, Method, error) {
	return fs.CountMethod(pid, MethodAuto)
}

// CountMethod counts with method m. MethodStat fails with ErrNotProcfs on a
// mount that is not procfs and with ErrStatUnsupported on a kernel that does
// not report counts in st_size.
func (fs *FS) CountMethod(pid int, m Method) (int, Method, error) {
	return fs.count(pid, 0, m)
}

// CountTask counts the descriptors of thread tid of process pid through
// /proc/PID/task/TID/fd: it differs from the process's count only for a
// thread that has its own descriptor table.
func (fs *FS) CountTask(pid, tid int, m Method) (int, Method, error) {
	return fs.count(pid, tid, m)
}

var defaultFS = sync.OnceValues(func() (*FS, error) { return NewFS(DefaultProcRoot) })

// Self returns the number of open descriptors of the calling process, using
// the stat fast path where the kernel supports it.
func Self() (int, error) {
	fs, err := defaultFS()
	if err != nil {
		return 0, err
	}
	n, _, err := fs.Count(os.Getpid())
	return n, err
}
