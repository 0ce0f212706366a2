package profile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0-1\n", []int{0, 1}, true},
		{"0", []int{0}, true},
		{"0-2,4,6-7", []int{0, 1, 2, 4, 6, 7}, true},
		{"", nil, false},
		{"a-b", nil, false},
		{"3-1", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseCPUList(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("parseCPUList(%q) error %v, want ok %v", tt.in, err, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want procStatus
		ok   bool
	}{
		{"leader", "Name:\tsleep\nState:\tS (sleeping)\nTgid:\t42\nPid:\t42\n", procStatus{'S', 42}, true},
		{"zombie", "State:\tZ (zombie)\nTgid:\t7\n", procStatus{'Z', 7}, true},
		{"no tgid", "State:\tR (running)\n", procStatus{}, false},
		{"bad tgid", "State:\tR\nTgid:\tx\n", procStatus{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("parseStatus error %v, want ok %v", err, tt.ok)
			}
			if tt.ok && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tsleep\nState:\tS (sleeping)\nTgid:\t42\n"))
	f.Add([]byte("State:\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStatus(b)
		if err == nil && (st.state == 0 || st.tgid == 0) {
			t.Errorf("no error but empty status %+v", st)
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-1", "0,2-3", "", "5-", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUList(s)
		if err == nil && len(cpus) == 0 {
			t.Error("no error and no cpus")
		}
	})
}

func TestParseStatPPID(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"42 (sleep) S 7 42 42 0 -1", 7, true},
		{"42 (we ird) (x) R 1 42", 1, true},
		{"42 (sleep)", 0, false},
		{"garbage", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseStatPPID([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseStatPPID(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseStatPPID(f *testing.F) {
	f.Add([]byte("42 (sleep) S 7 42"))
	f.Add([]byte(")))"))
	f.Fuzz(func(t *testing.T, b []byte) { parseStatPPID(b) })
}
