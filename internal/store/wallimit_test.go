package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// TestProjectorWALTruncatedOnRestart grows a projector's WAL past its resting limit while a
// reader pins a snapshot (so no checkpoint can let the WAL restart), then lets a checkpoint run
// as the prune watcher's does and commits one small write on the projector's connection: the
// WAL restarts and its file must fall back to the limit rather than keep its longest run's size.
func TestProjectorWALTruncatedOnRestart(t *testing.T) {
	tests := []struct {
		name    string
		keepRaw bool
		limit   int64 // the -wal file's most bytes after the restart
	}{
		{"prune watcher (256 MiB checkpoints)", false, 64 << 20},
		{"keep raw (32 MiB checkpoints)", true, 32 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t, Config{KeepRaw: tt.keepRaw, Logger: quietLogger})
			sh := s.shards[0]
			walPath := sh.path + "-wal"

			reader, err := s.readDB.Conn(ctx)
			if err != nil {
				t.Fatalf("reader: %v", err)
			}
			defer reader.Close()
			if _, err := reader.ExecContext(ctx, "BEGIN"); err != nil {
				t.Fatalf("reader BEGIN: %v", err)
			}
			var n int64
			if err := reader.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
				t.Fatalf("reader snapshot: %v", err)
			}

			// 96 MiB in 24 commits of 4 MiB each: past either limit, with a slice-sized commit.
			project := func(f func(c *sqlitec.Conn) error) {
				t.Helper()
				if err := sh.conn.Do(f); err != nil {
					t.Fatalf("projector connection: %v", err)
				}
			}
			project(func(c *sqlitec.Conn) error { return c.Exec("CREATE TABLE wallimit_scratch (b BLOB)") })
			for i := 0; i < 24; i++ {
				project(func(c *sqlitec.Conn) error {
					return c.Exec(fmt.Sprintf("INSERT INTO wallimit_scratch VALUES (zeroblob(%d))", 4<<20))
				})
			}
			if got := fileSize(t, walPath); got <= tt.limit {
				t.Fatalf("WAL after the pinned run: got %d bytes, want more than %d (the test needs a run past the limit)", got, tt.limit)
			}

			if _, err := reader.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatalf("reader ROLLBACK: %v", err)
			}
			watcher, err := openOne(ctx, dsn(sh.path, commonPragmas...))
			if err != nil {
				t.Fatalf("open a checkpointing connection: %v", err)
			}
			defer watcher.Close()
			polltest.Until(t, "a checkpoint to copy the whole WAL", func() bool {
				var busy, log, done int64
				err := watcher.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
				return err == nil && busy == 0 && log == done
			})
			project(func(c *sqlitec.Conn) error { return c.Exec("DROP TABLE wallimit_scratch") })

			if got := fileSize(t, walPath); got > tt.limit {
				t.Errorf("WAL after it restarted: got %d bytes, want at most %d", got, tt.limit)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	return fi.Size()
}
