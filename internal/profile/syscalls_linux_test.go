package profile

import (
	"strconv"
	"testing"
)

func TestTraceSyscallsExactCount(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "fstats", fstatProgram)
	for _, mode := range []AttachMode{AttachTPBTF, AttachRawTP} {
		t.Run(string(mode), func(t *testing.T) {
			const n = 12345
			rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, strconv.Itoa(n)}}, Attach: mode})
			st, ok := rep.Syscall("fstat")
			if !ok {
				t.Fatalf("no fstat in report: %+v", rep.Syscalls)
			}
			if st.Count != n {
				t.Errorf("fstat count = %d, want %d", st.Count, n)
			}
			if st.Errors != 0 {
				t.Errorf("fstat errors = %d, want 0", st.Errors)
			}
			if rep.ExitCode != 0 {
				t.Errorf("exit code = %d, want 0", rep.ExitCode)
			}
			if _, ok := rep.Syscall("exit_group"); !ok {
				t.Errorf("exit_group not counted: %+v", rep.Syscalls)
			}
		})
	}
}

func TestNoLatencyCountsExactly(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "fstats", fstatProgram)
	const n = 4321
	for _, mode := range []AttachMode{AttachTPBTF, AttachRawTP} {
		t.Run(string(mode), func(t *testing.T) {
			rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, strconv.Itoa(n)}},
				Attach: mode, NoLatency: true, Stacks: true})
			st, _ := rep.Syscall("fstat")
			if st.Count != n || st.TotalNs != 0 {
				t.Errorf("fstat count %d, total %d ns; want %d calls and no timing", st.Count, st.TotalNs, n)
			}
			if n := rep.Lost["syscalls with out-of-range numbers"]; n != 0 {
				t.Errorf("%d syscalls without a number, want 0 (rt_sigreturn is mapped)", n)
			}
			if eg, _ := rep.Syscall("exit_group"); eg.Count != 1 {
				t.Errorf("exit_group counted %d times, want 1 (it never returns: counted at process exit)", eg.Count)
			}
			if fromFn := callsThrough(rep, "fstat", "main.doFstats"); fromFn != n {
				t.Errorf("fstat stacks through main.doFstats = %d, want %d", fromFn, n)
			}
		})
	}
}
