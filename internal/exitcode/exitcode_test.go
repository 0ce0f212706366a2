package exitcode

import (
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
