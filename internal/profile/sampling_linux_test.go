package profile

import (
	"strconv"
	"testing"
)

// TestLatencySampling checks that sampling leaves counts and errors exact,
// that the report says how it sampled, and that the timed calls and their
// weights add up: every call timed with 1, a weight of N per timed call
// with a fixed N.
func TestLatencySampling(t *testing.T) {
	requireBPF(t)
	bin := buildGo(t, "errfstat", errFstatProgram)
	const n, e = 200000, 1000
	tests := []struct {
		name   string
		sample int
		attach AttachMode
	}{
		{"every call", 1, AttachTPBTF},
		{"fixed 16", 16, AttachTPBTF},
		{"fixed 16 raw_tp", 16, AttachRawTP},
		{"auto", LatencySampleAuto, AttachTPBTF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := traceSyscalls(t, SyscallConfig{Target: Target{Command: []string{bin, strconv.Itoa(n), strconv.Itoa(e)}},
				Attach: tt.attach, LatencySample: tt.sample})
			st, _ := rep.Syscall("fstat")
			if st.Count != n+e || st.Errors != e {
				t.Errorf("fstat: %d calls, %d errors; want exactly %d and %d", st.Count, st.Errors, n+e, e)
			}
			if eg, _ := rep.Syscall("exit_group"); eg.Count != 1 || eg.Timed != 0 {
				t.Errorf("exit_group: %d calls, %d timed; want 1 call, never timed", eg.Count, eg.Timed)
			}
			if n := rep.Lost["syscalls with out-of-range numbers"]; n != 0 {
				t.Errorf("%d syscalls without a number, want 0", n)
			}
			var weight uint64
			for _, c := range st.Hist {
				weight += c
			}
			switch {
			case tt.sample == LatencySampleAuto:
				if !rep.LatencyAuto || rep.LatencySample < 1 || rep.LatencySample > MaxAutoLatencySample {
					t.Errorf("report sampling %d auto %v, want auto within 1..%d", rep.LatencySample, rep.LatencyAuto, MaxAutoLatencySample)
				}
				if st.Timed > st.Count || weight < st.Timed {
					t.Errorf("fstat: %d timed of %d, weight %d: want timed <= count, weight >= timed", st.Timed, st.Count, weight)
				}
				if rep.LatencySample == 1 && st.Timed != st.Count {
					t.Errorf("never sampled, yet %d of %d calls timed", st.Timed, st.Count)
				}
			case tt.sample == 1:
				if rep.LatencySample != 1 || rep.LatencyAuto || st.Timed != st.Count || weight != st.Count {
					t.Errorf("every call: report sampling %d, %d of %d timed, weight %d; want 1 and all", rep.LatencySample, st.Timed, st.Count, weight)
				}
			default:
				if rep.LatencySample != tt.sample || rep.LatencyAuto {
					t.Errorf("report sampling %d auto %v, want %d fixed", rep.LatencySample, rep.LatencyAuto, tt.sample)
				}
				if st.Timed > st.Count || weight != st.Timed*uint64(tt.sample) {
					t.Errorf("fstat: %d timed of %d, weight %d; want timed <= count, weight %d per timed call", st.Timed, st.Count, weight, tt.sample)
				}
			}
			if st.Timed > 0 && (st.TotalNs == 0 || st.Avg() == 0 || st.MaxNs == 0) {
				t.Errorf("fstat timed %d calls but total %d ns, avg %v, max %d ns", st.Timed, st.TotalNs, st.Avg(), st.MaxNs)
			}
		})
	}
}
