//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// On-CPU sampler: a perf_event cpu-clock on every CPU runs this program; it
// counts (process, thread, kernel stack, user stack) of the target's tasks.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.bpf.h"

volatile const __u32 target_tgid = 0;
volatile const __u8 follow_children = 0;

struct sample_key {
	__u32 tgid;
	__u32 tid;
	__s32 kstack;
	__s32 ustack;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sample_key);
	__type(value, __u64);
} samples SEC(".maps");

SEC("perf_event")
int on_cpu_sample(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	if (!traced(tgid, target_tgid, follow_children))
		return 0;
	struct sample_key k = {.tgid = tgid, .tid = (__u32)pid_tgid};
	k.kstack = bpf_get_stackid(ctx, &stacks, 0);
	k.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (k.kstack < 0 && k.ustack < 0) {
		bump(CTR_STACK_ERRORS);
		return 0;
	}
	__u64 *v = bpf_map_lookup_elem(&samples, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&samples, &k, &one, BPF_NOEXIST) != 0) {
		v = bpf_map_lookup_elem(&samples, &k);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			bump(CTR_STACK_DROPS);
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(child, follow_children);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
