//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Counts the open files of one task without touching /proc: a task_file
// iterator (Linux 5.8+) visits each open file of the tasks its link selects
// (Linux 6.1+ lets the link select one task or one thread group), and the
// kernel never builds the dentry and inode per descriptor that reading
// /proc/PID/fd costs.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// The kernel's types, only the members read here; CO-RE relocates the
// offsets against the running kernel's BTF.
struct seq_file;
struct file;

struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task_file {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
	__u32 fd;
	struct file *file;
} __attribute__((preserve_access_index));

// count_files runs on a link limited to one task (the thread-group leader,
// whose table is /proc/PID/fd). It writes nothing per file: the iterator
// numbers the files it shows (meta->seq_num, from 0), so it writes one marker
// byte at the first file and, when the walk ends, the number of the last
// one. User space reads 8 bytes (no files) or 9 (seq_num + 1 files).
SEC("iter/task_file")
int count_files(struct bpf_iter__task_file *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	__u64 n = ctx->meta->seq_num;

	if (ctx->file) {
		if (n == 0) {
			__u8 marker = 1;
			bpf_seq_write(seq, &marker, sizeof(marker));
		}
		return 0;
	}
	if (!ctx->task) // the end of the walk (the stop call)
		bpf_seq_write(seq, &n, sizeof(n));
	return 0;
}

// task_files runs on a link limited to one thread group and writes the
// thread ID of the task of each file it is shown. The iterator already skips
// threads that share the leader's table, so a thread with a table of its own
// (unshare(CLONE_FILES)) shows up under its own ID.
SEC("iter/task_file")
int task_files(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 tid;

	if (!task || !ctx->file)
		return 0;
	tid = task->pid;
	bpf_seq_write(ctx->meta->seq, &tid, sizeof(tid));
	return 0;
}
