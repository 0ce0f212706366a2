package exitcode

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", base, Failure},
		{"usage", UsageError(base), Usage},
		{"wrapped usage", fmt.Errorf("parse flags: %w", Usagef("bad %s", "flag")), Usage},
		{"custom", New(3, base), 3},
		{"silent", New(1, nil), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err); got != tt.want {
				t.Errorf("Code(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
	if !errors.Is(UsageError(base), base) {
		t.Errorf("UsageError does not unwrap to its cause")
	}
}

func TestReport(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantOut  string
	}{
		{"nil", nil, OK, ""},
		{"plain", errors.New("boom"), Failure, "cmd: boom\n"},
		{"usage", Usagef("bad %s", "flag"), Usage, "cmd: bad flag\n"},
		{"wrapped silent", fmt.Errorf("run: %w", New(3, nil)), 3, "cmd: run: exit status 3\n"},
		{"silent", New(1, nil), 1, ""},
		{"empty message", errors.New(""), Failure, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := Report(&out, "cmd", tt.err); got != tt.wantCode {
				t.Errorf("code: got %d, want %d", got, tt.wantCode)
			}
			if got := out.String(); got != tt.wantOut {
				t.Errorf("output: got %q, want %q", got, tt.wantOut)
			}
		})
	}
}
