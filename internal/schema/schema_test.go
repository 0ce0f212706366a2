package schema

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestApply creates each part in a new file, applies it again (idempotent) and refuses a newer
// version than this build's.
func TestApply(t *testing.T) {
	ctx := context.Background()
	noLogText := func(context.Context, *sql.DB, bool, int) error { return nil }
	for _, tt := range []struct {
		name  string
		parts Parts
		table string
	}{
		{"raw", Raw, "raw"},
		{"logs and metrics", LogsMetrics, "number_points"},
		{"traces", Traces, "trace_chunks"},
		{"one file", LogsMetrics | Traces, "spans"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			for range 2 {
				if err := Apply(ctx, db, tt.parts, noLogText); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			var v, n int
			if err := db.QueryRow(`SELECT version, (SELECT count(*) FROM schema_version) FROM schema_version`).Scan(&v, &n); err != nil {
				t.Fatal(err)
			}
			if v != Version || n != 1 {
				t.Errorf("schema_version: got %d in %d rows, want %d in 1", v, n, Version)
			}
			var tables int
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tt.table).Scan(&tables); err != nil {
				t.Fatal(err)
			}
			if tables != 1 {
				t.Errorf("table %s: got %d, want 1", tt.table, tables)
			}
			if _, err := db.Exec(`UPDATE schema_version SET version = ?`, Version+1); err != nil {
				t.Fatal(err)
			}
			err := Apply(ctx, db, tt.parts, noLogText)
			if err == nil || !strings.Contains(err.Error(), "newer than this build") {
				t.Errorf("Apply on version %d: got %v, want a newer-version error", Version+1, err)
			}
		})
	}
	if err := Apply(ctx, openDB(t), LogsMetrics, func(context.Context, *sql.DB, bool, int) error {
		return errors.New("log text failed")
	}); err == nil || !strings.Contains(err.Error(), "log text failed") {
		t.Errorf("Apply with a failing log-text catch-up: got %v, want its error", err)
	}
}
