package diskfull

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		full bool
	}{
		{"ENOSPC", &fs.PathError{Op: "write", Path: "raw.db-wal", Err: syscall.ENOSPC}, true},
		{"EDQUOT wrapped", fmt.Errorf("commit: %w", syscall.EDQUOT), true},
		{"EIO", syscall.EIO, false},
		{"other", errors.New("no such table: raw"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is(tt.err); got != tt.full {
				t.Errorf("Is(%v) = %v, want %v", tt.err, got, tt.full)
			}
			err := Classify("insert raw", tt.err)
			if got := errors.Is(err, ErrDiskFull); got != tt.full {
				t.Errorf("Classify: errors.Is(%v, ErrDiskFull) = %v, want %v", err, got, tt.full)
			}
			if !errors.Is(err, tt.err) && !tt.full {
				t.Errorf("Classify(%v) = %v, does not wrap the error", tt.err, err)
			}
		})
	}
}
