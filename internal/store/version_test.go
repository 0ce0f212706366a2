package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/schema"
)

// TestOpenRefusesOtherVersion writes a data directory, marks one of its databases as written by
// another schema version, and checks that Open refuses it with an error that names the file,
// the version found, the version this build reads and what to do, and that the file's rows are
// left as they were.
func TestOpenRefusesOtherVersion(t *testing.T) {
	for _, tc := range []struct {
		file    string
		version int
	}{
		{FileName, schema.Version - 1},
		{FileName, schema.Version + 1},
	} {
		t.Run(fmt.Sprint(tc.file, " version ", tc.version), func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, Config{Dir: dir, Sync: SyncOff})
			appendSummaryData(t, s, 0)
			waitProjected(t, s)
			logs := countRows(t, s, "logs")
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.file)
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE schema_version SET version = ?`, tc.version); err != nil {
				t.Fatal(err)
			}
			s, err = Open(context.Background(), Config{Dir: dir, Sync: SyncOff})
			if err == nil {
				s.Close(context.Background())
				t.Fatalf("Open of a version %d %s: no error", tc.version, tc.file)
			}
			var ve *schema.VersionError
			if !errors.As(err, &ve) || ve.Found != tc.version {
				t.Errorf("Open: got %v, want a *schema.VersionError for version %d", err, tc.version)
			}
			for _, want := range []string{path, fmt.Sprintf("version %d,", tc.version), fmt.Sprintf("version %d only", schema.Version), "empty --data directory"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tc.file == FileName {
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM logs`).Scan(&n); err != nil || n != logs {
					t.Errorf("logs after the refused Open: %d, %v; want %d", n, err, logs)
				}
			}
		})
	}
}
