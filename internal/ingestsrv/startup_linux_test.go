package ingestsrv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/store"
	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestStartupErrorNamesPathAndCause: on a read-only file system or a full
// disk, New fails with an error that names the data directory and the
// operating system's reason, not only SQLite's "unable to open database
// file (14)" or "disk I/O error".
func TestStartupErrorNamesPathAndCause(t *testing.T) {
	readOnly := tmpfstest.Mount(t, syscall.MS_RDONLY, "1m")
	full := tmpfstest.Mount(t, 0, "256k")
	if err := os.WriteFile(filepath.Join(full, "filler"), make([]byte, 512<<10), 0o644); err == nil {
		t.Fatal("wrote 512k to a 256k tmpfs")
	}
	tests := []struct {
		name, dir, cause string
	}{
		{"read-only file system", readOnly, "read-only file system"},
		{"full disk", full, "no space left on device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(context.Background(), Config{Config: store.Config{Dir: tt.dir, Logger: discard()}})
			if err == nil {
				_ = srv.Close(context.Background())
				t.Fatal("New succeeded")
			}
			if msg := err.Error(); !strings.Contains(msg, tt.dir) || !strings.Contains(msg, tt.cause) {
				t.Errorf("error %q, want it to name %s and %q", msg, tt.dir, tt.cause)
			}
		})
	}
}
