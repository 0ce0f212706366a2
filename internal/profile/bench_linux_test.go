package profile

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// BenchmarkGetppid measures the cost a trace adds to the cheapest syscall
// of the traced process (this one): compare ns/op of the sub-benchmarks,
// e.g. go test -run '^$' -bench Getppid -count 5 ./internal/profile | benchstat -
// (scripts/bench-profile.sh measures the same against bpftrace, strace
// and perf trace).
func BenchmarkGetppid(b *testing.B) {
	modes := []struct {
		name string
		cfg  *SyscallConfig
	}{
		{"bare", nil},
		{"traced", &SyscallConfig{}},
		{"traced-every-call", &SyscallConfig{LatencySample: 1}},
		{"traced-raw_tp", &SyscallConfig{Attach: AttachRawTP}},
		{"traced-no-latency", &SyscallConfig{NoLatency: true}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			if m.cfg != nil {
				if os.Geteuid() != 0 {
					b.Skip("needs root to load BPF programs")
				}
				stop := traceSelf(b, *m.cfg)
				defer stop()
			}
			b.ResetTimer()
			for b.Loop() {
				syscall.Getppid()
			}
		})
	}
}

// traceSelf traces this process until the returned func is called.
func traceSelf(b *testing.B, cfg SyscallConfig) func() {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	attached := make(chan struct{})
	done := make(chan error, 1)
	cfg.PID = os.Getpid()
	cfg.Attached = func(int) { close(attached) }
	go func() {
		_, err := TraceSyscalls(ctx, cfg)
		done <- err
	}()
	select {
	case <-attached:
	case err := <-done:
		cancel()
		b.Fatalf("trace: %v", err)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("trace: %v", err)
		}
	}
}
