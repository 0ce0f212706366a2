// Package procfd counts the open file descriptors of Linux processes, fast.
//
// Since Linux 6.2 (commit f1f1f2569901, "proc: report open files as size in
// stat() for /proc/pid/fd") stat(2) on /proc/PID/fd returns the number of open
// descriptors in st_size: the kernel counts the bits of the fd bitmap instead
// of instantiating a dentry and inode per descriptor, so the cost is flat in
// the number of descriptors. On anything that is not procfs (a fixture
// directory, a pre-6.2 kernel, another OS) st_size means something else, so
// the mount is checked once with statfs(2) against PROC_SUPER_MAGIC (0x9fa0),
// as prometheus/procfs does.
//
// The fallback reads the directory with raw getdents64(2) into a pooled
// buffer and counts the records without allocating a string per entry. Over
// 90% of its cost is the kernel's per-entry dcache work (proc_fill_cache),
// the same for every getdents reader, so it is about 1.3-1.9x cheaper than
// os.File.Readdirnames, not more (docs/benchmarks/fdcount.md). Options.Workers
// lets several goroutines read disjoint ranges of a large fd directory
// (procfs puts descriptor N at directory position N+2), which can shorten
// the wall-clock time of one count on idle CPUs but not its CPU time.
//
// MethodBPF avoids the dentry work altogether: a BPF task_file iterator
// (iter/task_file, Linux 5.8+) whose link is limited to the one task
// (bpf_iter_link_info.task, Linux 6.1+; cilium/ebpf v0.22's link.AttachIter
// does not pass it, so the link is created with a raw bpf(2) call) walks the
// task's descriptor table in the kernel; the program writes nothing per file
// and reports the iterator's sequence number of the last one, so one count
// is two bpf(2) calls, one read and two closes, whatever N. It needs root
// (or CAP_BPF and CAP_PERFMON) and kernel BTF. The programs are loaded once
// per FS, on first use, and released by Close. The link selects a thread-group
// leader by its PID, so a thread with a table of its own (unshare(CLONE_FILES))
// is not counted with the process, as in /proc/PID/fd; CountTask counts such a
// thread's table with a second program over the thread group, and tells
// threads that share the leader's table (which the kernel's walk skips)
// with kcmp(2). A count of 0 is confirmed by reading the directory, which
// is cheap when it is empty: it tells a zombie from a missing process, and
// counts a task the iterator does not show (a thread ID given as a PID).
//
// An FS is safe for concurrent use. Count picks the method: MethodStat when
// the mount is procfs and st_size is positive; MethodReaddir for a size of 0
// on a kernel that reports sizes (no descriptors, a zombie: cheap in exactly
// those cases). Where the kernel does not report sizes (before 6.2), auto
// reads directories until one holds BPFLoadFDs descriptors or more: loading
// the BPF programs costs about as much as reading that directory once, so
// that count loads them (or LoadBPF does, up front) and every later count
// uses MethodBPF. Auto never fails because BPF is unavailable: the load
// error is kept and directories are read. Reading /proc/PID/fd of another
// user's process needs ptrace access, but its stat size does not: when the
// fallback is refused and the kernel is known to report sizes, the size (0)
// is the answer.
//
// Threads created with CLONE_FILES unset, or that called unshare(CLONE_FILES),
// own a separate descriptor table visible at /proc/PID/task/TID/fd. Tables
// lists the distinct tables of a process, grouping threads with
// kcmp(2) KCMP_FILES, the kernel's own comparison of files_struct pointers
// (the inode numbers of the task fd directories differ per task even when the
// table is shared, so they cannot tell).
//
// Run is the engine behind cmd/fdcount: one-shot or repeated counts of given
// processes or of every process, as a table or JSON.
package procfd
