// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Shared helpers of the syscall and CPU profilers.
#pragma once

#define HIST_BUCKETS 48
#define MAX_STACK_DEPTH 127
#define TASK_COMM_LEN 16

// Minimal kernel types, relocated against the running kernel's BTF (CO-RE):
// no vmlinux.h needed.
struct pt_regs;
struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

struct comm {
	char name[TASK_COMM_LEN];
};

enum counter {
	CTR_STACK_ERRORS,
	CTR_STACK_DROPS,
	CTR_STORAGE_ERRORS,
	CTR_BAD_NR,
	CTR_CHILDREN,
	CTR_CALLS,
	CTR_MAX,
};

// Followed processes (the target and, with follow_children, its
// descendants). Also read by user space to list the children.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

// Stack ids of the sampled stacks, one table per object (bpf_get_stackid).
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

static __always_inline void bump(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);
	if (v)
		(*v)++;
}

static __always_inline int traced(__u32 tgid, __u32 target, __u8 follow)
{
	if (tgid == target)
		return 1;
	if (!follow)
		return 0;
	return bpf_map_lookup_elem(&tgids, &tgid) != 0;
}

static __always_inline int on_fork(struct task_struct *child, __u8 follow)
{
	if (!follow)
		return 0;
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&tgids, &parent))
		return 0;
	__u32 tgid = child->tgid;
	if (tgid == parent)
		return 0; // a new thread, already covered by its tgid
	__u8 one = 1;
	if (bpf_map_update_elem(&tgids, &tgid, &one, BPF_NOEXIST) == 0)
		bump(CTR_CHILDREN);
	return 0;
}

static __always_inline __u32 log2_u32(__u32 v)
{
	__u32 r, shift;
	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

// log2l returns floor(log2(v)), and 0 for 0: bucket i holds [2^i, 2^(i+1)).
static __always_inline __u32 log2l(__u64 v)
{
	__u32 hi = v >> 32;
	if (hi)
		return log2_u32(hi) + 32;
	return log2_u32(v);
}
