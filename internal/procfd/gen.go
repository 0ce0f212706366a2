package procfd

// The BPF task_file iterator behind MethodBPF is compiled with Debian's clang
// by bpf2go; the generated .go and .o files are committed so that go build
// needs no clang (bpfel for amd64, arm64 and the other little-endian
// architectures, bpfeb for the rest). The include path only supplies
// asm/types.h, the same generic header on every architecture.
//go:generate go tool bpf2go -tags linux -target bpfel,bpfeb fdIter fditer.bpf.c -- -I/usr/include/x86_64-linux-gnu -I/usr/include/aarch64-linux-gnu -O2 -g -Wall
