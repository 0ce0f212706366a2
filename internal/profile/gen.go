package profile

// The BPF programs are compiled with Debian's clang by bpf2go; the generated
// .go and .o files are committed so that go build needs no clang. Both
// amd64 and arm64 are little-endian, so one bpfel object serves both.
// The include path only supplies asm/types.h, which is the same generic
// header on every architecture.
//go:generate go tool bpf2go -tags linux -target bpfel -type syscall_stats -type thread_key -type stack_key -type stack_val -type inflight -type comm syscalls syscalls.bpf.c -- -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu -O2 -g -Wall
//go:generate go tool bpf2go -tags linux -target bpfel -type sample_key cpu cpu.bpf.c -- -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu -O2 -g -Wall
