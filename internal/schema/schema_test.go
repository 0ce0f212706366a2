package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestApply creates each part in a new file, applies it again (idempotent) and checks the
// version it wrote.
func TestApply(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		parts Parts
		table string
	}{
		{"logs and metrics", LogsMetrics, "number_points"},
		{"traces", Traces, "trace_chunks"},
		{"one file", LogsMetrics | Traces, "spans"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
			for range 2 {
				if err := Apply(ctx, db, tt.parts); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			var v, n, tables int
			if err := db.QueryRow(`SELECT version, (SELECT count(*) FROM schema_version) FROM schema_version`).Scan(&v, &n); err != nil {
				t.Fatal(err)
			}
			if v != Version || n != 1 {
				t.Errorf("schema_version: got %d in %d rows, want %d in 1", v, n, Version)
			}
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, tt.table).Scan(&tables); err != nil {
				t.Fatal(err)
			}
			if tables != 1 {
				t.Errorf("table %s: got %d, want 1", tt.table, tables)
			}
		})
	}
}

// TestApplyRefusesOtherVersions opens SQLite files of an older and a newer schema version, as
// an earlier build left them (the older one with a table this schema no longer has), and checks
// that Apply refuses each with an error naming both versions and what to do, and leaves the
// file as it was.
func TestApplyRefusesOtherVersions(t *testing.T) {
	ctx := context.Background()
	for _, found := range []int{1, Version - 1, Version + 1} {
		t.Run(fmt.Sprint("version ", found), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "telemetry.db")
			old := openDB(t, path)
			if _, err := old.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL);
				INSERT INTO schema_version VALUES (?);
				CREATE TABLE logs (id INTEGER PRIMARY KEY, body TEXT);
				CREATE VIRTUAL TABLE logs_fts USING fts5(body);
				INSERT INTO logs VALUES (1, 'kept')`, found); err != nil {
				t.Fatal(err)
			}
			old.Close()
			db := openDB(t, path)
			err := Apply(ctx, db, LogsMetrics|Traces)
			var ve *VersionError
			if !errors.As(err, &ve) || ve.Found != found {
				t.Fatalf("Apply: got %v, want a *VersionError for version %d", err, found)
			}
			for _, want := range []string{fmt.Sprintf("version %d", found), fmt.Sprintf("version %d only", Version), "empty --data directory"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			var spans int
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'spans'`).Scan(&spans); err != nil || spans != 0 {
				t.Errorf("Apply created tables in the refused file: spans %d, %v", spans, err)
			}
		})
	}
}
