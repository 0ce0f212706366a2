//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Syscall profiler: per-syscall counters, latency histograms and optional
// user stacks of one process (or one process tree), aggregated in the kernel.
// Only the totals cross to user space, when the trace ends.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"

#define MAX_SYSCALLS 1024

// Set by the loader (rodata): a constant comparison is the cheapest filter
// for the common single-process case; follow_children switches to a map.
volatile const __u32 target_tgid = 0;
volatile const __u8 follow_children = 0;
volatile const __u8 per_thread = 0;
volatile const __u8 want_stacks = 0;
// exit and exit_group never return, so they are counted at entry.
volatile const __s32 nr_exit = -1;
volatile const __s32 nr_exit_group = -1;
// rt_sigreturn restores the registers of the interrupted code and marks the
// syscall number invalid (-1) on the way, so it exits with no number.
volatile const __s32 nr_rt_sigreturn = -1;
// count_calls counts every traced call in counters[CTR_CALLS], for the
// rate that sets the latency sampling.
volatile const __u8 count_calls = 0;

// Latency sampling. Every call is counted at exit; a call is timed when the
// entry program is attached as it starts, which user space arranges for all
// of the time (every call timed) or for 1/N of it in short windows (the
// entry program's mere presence costs as much as the whole count). A
// timed call stands for entry_weight calls: N, written by user space while
// the program is detached.
volatile __u64 entry_weight = 1;
// pending counts calls with an in-flight record, so that exits skip the
// task storage lookup while there is none.
volatile __u64 pending = 0;

// count and errors are exact. The time fields cover the timed calls only,
// each weighted by the number of calls it stands for (1 without sampling):
// weight sums the weights, total_ns the weighted times, hist the weights
// per log2 bucket; timed counts the timed calls, max_ns is their maximum.
struct syscall_stats {
	__u64 count;
	__u64 errors;
	__u64 total_ns;
	__u64 max_ns;
	__u64 timed;
	__u64 weight;
	__u64 hist[HIST_BUCKETS];
};

struct thread_key {
	__u32 tgid;
	__u32 tid;
	__u32 nr;
	__u32 pad;
};

struct stack_key {
	__u32 tgid;
	__u32 nr;
	__s32 stackid;
	__u32 pad;
};

struct stack_val {
	__u64 count;
	__u64 total_ns;
};

// In-flight syscall of a thread. Task-local storage needs no hashing and is
// freed with the task.
struct inflight {
	__u64 ts;
	__s64 nr;
	__s64 stackid;
	__u64 weight;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, struct syscall_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct thread_key);
	__type(value, struct syscall_stats);
} thread_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct comm);
} thread_comm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stack_key);
	__type(value, struct stack_val);
} stack_counts SEC(".maps");

// count adds one finished call (or, for exit, one that never returns).
static __always_inline void count(struct syscall_stats *s, long ret)
{
	s->count++;
	if (ret < 0 && ret >= -4095)
		s->errors++;
}

// add_time adds a timed call of duration d standing for w calls.
static __always_inline void add_time(struct syscall_stats *s, __u64 d, __u64 w)
{
	s->timed++;
	s->weight += w;
	s->total_ns += d * w;
	if (d > s->max_ns)
		s->max_ns = d;
	__u32 b = log2l(d);
	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	s->hist[b] += w;
}

// account_shared is count and add_time for maps that several CPUs update
// at once; w == 0 means the call was not timed.
static __always_inline void account_shared(struct syscall_stats *s, __u64 d, __u64 w, long ret)
{
	__sync_fetch_and_add(&s->count, 1);
	if (ret < 0 && ret >= -4095)
		__sync_fetch_and_add(&s->errors, 1);
	if (!w)
		return;
	__sync_fetch_and_add(&s->timed, 1);
	__sync_fetch_and_add(&s->weight, w);
	__sync_fetch_and_add(&s->total_ns, d * w);
	if (d > s->max_ns)
		s->max_ns = d; // racy by design: a lost max is a tiny error
	__u32 b = log2l(d);
	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	__sync_fetch_and_add(&s->hist[b], w);
}

static __always_inline void account_thread(__u32 tgid, __u32 tid, __u32 nr, __u64 d, __u64 w, long ret)
{
	struct thread_key k = {.tgid = tgid, .tid = tid, .nr = nr};
	struct syscall_stats *s = bpf_map_lookup_elem(&thread_stats, &k);
	if (!s) {
		static const struct syscall_stats zero;
		bpf_map_update_elem(&thread_stats, &k, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&thread_stats, &k);
		if (!s)
			return;
		struct comm c = {};
		bpf_get_current_comm(&c.name, sizeof(c.name));
		bpf_map_update_elem(&thread_comm, &tid, &c, BPF_ANY);
	}
	account_shared(s, d, w, ret);
}

// NO_STACK marks a call whose stack was not taken (its entry was not seen).
#define NO_STACK (-2)

static __always_inline void account_stack(__u32 tgid, __u32 nr, __s64 stackid, __u64 d)
{
	if (stackid == NO_STACK)
		return;
	if (stackid < 0) {
		bump(CTR_STACK_ERRORS);
		return;
	}
	struct stack_key k = {.tgid = tgid, .nr = nr, .stackid = stackid};
	struct stack_val *v = bpf_map_lookup_elem(&stack_counts, &k);
	if (!v) {
		struct stack_val init = {.count = 1, .total_ns = d};
		if (bpf_map_update_elem(&stack_counts, &k, &init, BPF_NOEXIST) == 0)
			return;
		v = bpf_map_lookup_elem(&stack_counts, &k);
		if (!v) {
			bump(CTR_STACK_DROPS);
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, d);
}

// record counts a syscall that ended (or, for exit, never will) and adds
// its time d with weight w if it was timed (w > 0).
static __always_inline void record(__u64 pid_tgid, __u32 nr, __u64 d, __u64 w, long ret, __s64 stackid)
{
	__u32 tgid = pid_tgid >> 32;
	struct syscall_stats *s = bpf_map_lookup_elem(&stats, &nr);
	if (s) {
		count(s, ret);
		if (w)
			add_time(s, d, w);
	}
	if (per_thread)
		account_thread(tgid, (__u32)pid_tgid, nr, d, w, ret);
	if (want_stacks)
		account_stack(tgid, nr, stackid, d);
}

static __always_inline int on_enter(void *ctx, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32, target_tgid, follow_children))
		return 0;
	if (id < 0 || id >= MAX_SYSCALLS) {
		bump(CTR_BAD_NR);
		return 0;
	}
	if (id == nr_exit || id == nr_exit_group)
		return 0; // never return: counted by sched_exit
	__s64 stackid = -1;
	if (want_stacks)
		stackid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	struct inflight *f = bpf_task_storage_get(&inflight_store, bpf_get_current_task_btf(), 0,
						  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!f) {
		bump(CTR_STORAGE_ERRORS);
		return 0;
	}
	if (!f->ts)
		__sync_fetch_and_add(&pending, 1);
	f->nr = id;
	f->stackid = stackid;
	f->weight = entry_weight;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

// The syscall number at exit, from the saved registers: orig_ax on amd64,
// syscallno on arm64, chosen by CO-RE at load time. tp_btf programs read
// it directly from their typed argument, raw_tp ones through a probe read.
struct pt_regs___x86 {
	long orig_ax;
} __attribute__((preserve_access_index));

struct pt_regs___arm64 {
	int syscallno;
} __attribute__((preserve_access_index));

static __always_inline long syscall_nr(struct pt_regs *regs, int direct)
{
	if (bpf_core_field_exists(((struct pt_regs___x86 *)0)->orig_ax)) {
		if (direct)
			return ((struct pt_regs___x86 *)regs)->orig_ax;
		return BPF_CORE_READ((struct pt_regs___x86 *)regs, orig_ax);
	}
	if (bpf_core_field_exists(((struct pt_regs___arm64 *)0)->syscallno)) {
		if (direct)
			return ((struct pt_regs___arm64 *)regs)->syscallno;
		return BPF_CORE_READ((struct pt_regs___arm64 *)regs, syscallno);
	}
	return -1;
}

// exit_nr is the syscall number at exit in the range of the stats array,
// or -1. rt_sigreturn invalidates the number on its way out (-1), so an
// exit without a number is rt_sigreturn.
static __always_inline long exit_nr(struct pt_regs *regs, int direct)
{
	long nr = syscall_nr(regs, direct);
	if (nr == -1)
		nr = nr_rt_sigreturn;
	if (nr < 0 || nr >= MAX_SYSCALLS) {
		bump(CTR_BAD_NR);
		return -1;
	}
	return nr;
}

static __always_inline int on_exit(struct pt_regs *regs, long ret, int direct)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32, target_tgid, follow_children))
		return 0;
	if (count_calls)
		bump(CTR_CALLS);
	if (pending) {
		struct inflight *f = bpf_task_storage_get(&inflight_store, bpf_get_current_task_btf(), 0, 0);
		if (f && f->ts) {
			__u64 d = bpf_ktime_get_ns() - f->ts;
			f->ts = 0;
			__sync_fetch_and_sub(&pending, 1);
			record(pid_tgid, f->nr, d, f->weight, ret, f->stackid);
			return 0;
		}
	}
	// Not timed (entered while the entry program was detached): counted
	// with the number from the registers.
	long nr = exit_nr(regs, direct);
	if (nr < 0)
		return 0;
	record(pid_tgid, nr, 0, 0, ret, NO_STACK);
	return 0;
}

// on_exit_count counts a syscall at exit, without timing it: one program,
// no clock reads, no per-thread state. (exit and exit_group never return:
// sched_exit counts them.)
static __always_inline int on_exit_count(void *ctx, struct pt_regs *regs, long ret, int direct)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32, target_tgid, follow_children))
		return 0;
	long nr = exit_nr(regs, direct);
	if (nr < 0)
		return 0;
	__s64 stackid = -1;
	if (want_stacks)
		stackid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	__u32 tgid = pid_tgid >> 32;
	__u32 k = nr;
	struct syscall_stats *s = bpf_map_lookup_elem(&stats, &k);
	if (s)
		count(s, ret);
	if (per_thread)
		account_thread(tgid, (__u32)pid_tgid, nr, 0, 0, ret);
	if (want_stacks)
		account_stack(tgid, nr, stackid, 0);
	return 0;
}

// tp_btf programs read their arguments straight from the context; the
// raw_tp variants below are the fallback for kernels whose BTF lacks the
// tracepoint. Both cost about the same (docs/benchmarks/profile.md).
SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_btf, struct pt_regs *regs, long id)
{
	return on_enter(ctx, id);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_btf, struct pt_regs *regs, long ret)
{
	return on_exit(regs, ret, 1);
}

SEC("raw_tp/sys_enter")
int sys_enter_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_enter(ctx, (long)ctx->args[1]);
}

SEC("raw_tp/sys_exit")
int sys_exit_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_exit((struct pt_regs *)ctx->args[0], (long)ctx->args[1], 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_count_btf, struct pt_regs *regs, long ret)
{
	return on_exit_count(ctx, regs, ret, 1);
}

SEC("raw_tp/sys_exit")
int sys_exit_count_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_exit_count(ctx, (struct pt_regs *)ctx->args[0], (long)ctx->args[1], 0);
}

// sched_exit counts exit and exit_group, which never return: a thread that
// leaves through one of them still has its number in the saved registers
// (a thread killed by a signal has the number of the call it was in, or -1).
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_exit, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32, target_tgid, follow_children))
		return 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return 0;
	long nr = syscall_nr(regs, 1);
	if (nr != nr_exit && nr != nr_exit_group)
		return 0;
	if (nr < 0 || nr >= MAX_SYSCALLS)
		return 0;
	__s64 stackid = -1;
	if (want_stacks)
		stackid = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	record(pid_tgid, nr, 0, 0, 0, stackid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(child, follow_children);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
