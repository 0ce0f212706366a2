// Package profile traces a process with eBPF: which syscalls it makes, how
// long they take and from which code paths (syscall mode), and where its CPU
// time goes, kernel side included (CPU mode).
//
// Syscall mode attaches to the raw_syscalls sys_enter/sys_exit tracepoints,
// filters by the target's tgid in the kernel and aggregates per syscall
// (count, errors, total and max time, log2 latency histogram) in per-CPU
// maps; nothing streams to user space per event. CPU mode samples on-CPU
// stacks with a perf_event cpu-clock on every CPU. Both write pprof profiles
// symbolized from the target's ELF files and /proc/kallsyms.
package profile
