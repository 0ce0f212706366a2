package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// rawCount counts the durable rows in the raw log.
func rawCount(t testing.TB, s *Store) int {
	t.Helper()
	var n int
	if err := s.ScanRaw(func(rawlog.Row) error { n++; return nil }); err != nil {
		t.Fatalf("count raw: %v", err)
	}
	return n
}

// waitDurable waits until the prune watch has published a durable high-water mark covering
// every raw row committed so far.
func waitDurable(t testing.TB, s *Store) {
	t.Helper()
	waitProjected(t, s)
	last := s.Stats().LastRawID
	polltest.Until(t, "durable projection mark", func() bool { return s.raw.Projected() >= last })
}

// TestPruneProjected: with a tiny retention and small segments, projected segments are deleted
// whole from the raw log, between group writes and, with no traffic, by the idle writer (the
// active segment too, replaced by an empty one); the logs stay in telemetry.db, and raw ids keep
// increasing across a reopen with an empty raw log.
func TestPruneProjected(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, RawRetention: time.Nanosecond, Logger: quietLogger, rawSegmentBytes: 4096}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		appendLogs(t, s, makeLogs("svc", "first", 1+i%3))
	}
	waitDurable(t, s)
	last := s.Stats().LastRawID
	appendLogs(t, s, makeLogs("svc", "trigger", 1))
	polltest.Until(t, "prune of the first rows", func() bool { return s.PrunedRawID() >= last })
	waitDurable(t, s) // the trigger row: pruned by the idle writer, no further Append
	polltest.Until(t, "idle prune", func() bool { return s.PrunedRawID() == s.Stats().LastRawID })
	if got := rawCount(t, s); got != 0 {
		t.Errorf("raw rows left %d, want 0", got)
	}
	if segs := s.raw.Segments(); len(segs) != 1 || segs[0].Last >= segs[0].First {
		t.Errorf("segments left %+v, want one empty", segs)
	}
	wantLogs := countRows(t, s, "logs")
	if wantLogs == 0 {
		t.Fatal("no logs projected")
	}
	lastBefore := s.Stats().LastRawID
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, cfg)
	if got := s.PrunedRawID(); got != lastBefore {
		t.Errorf("after reopen: pruned mark %d, want %d", got, lastBefore)
	}
	appendLogs(t, s, makeLogs("svc", "after", 2))
	if got := s.Stats().LastRawID; got != lastBefore+1 {
		t.Errorf("raw id after reopen %d, want %d (ids are never reused)", got, lastBefore+1)
	}
	waitProjected(t, s)
	if got := countRows(t, s, "logs"); got != wantLogs+2 {
		t.Errorf("logs %d, want %d", got, wantLogs+2)
	}
}

// TestPruneStopsAtProjection: a segment is not deleted while any of its rows is past the
// durable projection mark, however old.
func TestPruneStopsAtProjection(t *testing.T) {
	s := openTest(t, Config{RawRetention: time.Nanosecond, Logger: quietLogger, rawSegmentBytes: 4096})
	for range 6 {
		appendLogs(t, s, makeLogs("svc", "a", 1))
	}
	waitDurable(t, s)
	mark := s.raw.Projected()
	s.projectStop() // no more projection: the mark stays
	for _, sh := range s.shards {
		<-sh.done
	}
	for range 6 {
		appendLogs(t, s, makeLogs("svc", "b", 1))
	}
	time.Sleep(3 * pruneEvery)
	if got := s.PrunedRawID(); got > mark {
		t.Errorf("pruned through %d, past the durable projection mark %d", got, mark)
	}
	if got := rawCount(t, s); got < 6 {
		t.Errorf("raw rows left %d, want >= 6 (the unprojected ones)", got)
	}
}

// TestPruneRespectsRetention: rows younger than the retention stay, even when their projection
// is durable and a group commit had the chance to prune them.
func TestPruneRespectsRetention(t *testing.T) {
	s := openTest(t, Config{RawRetention: time.Hour, Logger: quietLogger})
	for range 5 {
		appendLogs(t, s, makeLogs("svc", "young", 2))
	}
	waitDurable(t, s)
	appendLogs(t, s, makeLogs("svc", "trigger", 1))
	if got := s.PrunedRawID(); got != 0 {
		t.Errorf("pruned through raw id %d, want 0 (retention 1h)", got)
	}
	if got := rawCount(t, s); got != 6 {
		t.Errorf("raw rows %d, want 6", got)
	}
}

// TestPruneKeepRaw: KeepRaw (and NoProjection) never delete anything.
func TestPruneKeepRaw(t *testing.T) {
	for _, cfg := range []Config{
		{RawRetention: time.Nanosecond, KeepRaw: true, Logger: quietLogger},
		{RawRetention: time.Nanosecond, NoProjection: true, Logger: quietLogger},
	} {
		s := openTest(t, cfg)
		if s.pruneConfigured() {
			t.Fatalf("%+v: pruning configured", cfg)
		}
		appendLogs(t, s, makeLogs("svc", "keep", 1))
		appendLogs(t, s, makeLogs("svc", "keep", 1))
		if got := rawCount(t, s); got != 2 {
			t.Errorf("raw rows %d, want 2", got)
		}
	}
}

// TestProjectorCheckpointThreshold: with the prune watcher checkpointing telemetry.db every
// second, the projector's own automatic checkpoint only bounds the WAL (256 MiB); without the
// watcher it keeps the WAL at 32 MiB itself. New files have 8 KiB pages; a file created with
// 4 KiB pages keeps them, and its threshold in pages doubles.
func TestProjectorCheckpointThreshold(t *testing.T) {
	for _, tc := range []struct {
		cfg       Config
		oldPages  bool
		wantBytes int64
	}{
		{Config{Logger: quietLogger}, false, 256 << 20},
		{Config{TracesFile: true, Logger: quietLogger}, false, 256 << 20},
		{Config{KeepRaw: true, Logger: quietLogger}, false, 32 << 20},
		{Config{Logger: quietLogger}, true, 256 << 20},
		{Config{KeepRaw: true, Logger: quietLogger}, true, 32 << 20},
	} {
		wantPage := int64(projectedPageSize)
		if tc.oldPages {
			// An older directory: telemetry.db was created with SQLite's default 4 KiB pages.
			wantPage = 4096
			tc.cfg.Dir = t.TempDir()
			db, err := sql.Open("sqlite", "file:"+filepath.Join(tc.cfg.Dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("PRAGMA page_size = 4096; PRAGMA journal_mode = wal; CREATE TABLE older(x)"); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}
		s := openTest(t, tc.cfg)
		for _, sh := range s.shards {
			page, pages := pragma(t, sh.conn, "page_size"), pragma(t, sh.conn, "wal_autocheckpoint")
			if page != wantPage {
				t.Errorf("%+v: %s has %d-byte pages, want %d", tc.cfg, sh.name, page, wantPage)
			}
			if page*pages != tc.wantBytes {
				t.Errorf("%+v: the %s projector checkpoints every %d pages of %d bytes, want %d bytes", tc.cfg, sh.name, pages, page, tc.wantBytes)
			}
		}
	}
}

// TestProjectorConnPragmas: the projector's sqlitec connection (project.Conn) gets the settings the
// driver's DSN gave it before (the raw reader's: rawlog's TestReaderPragmas).
func TestProjectorConnPragmas(t *testing.T) {
	for _, oneFile := range []bool{true, false} {
		s := openTest(t, Config{TracesFile: !oneFile, Logger: quietLogger})
		for _, sh := range s.shards {
			for name, want := range map[string]int64{"synchronous": 1, "cache_size": -2048, "cache_spill": 0,
				"busy_timeout": 10000, "foreign_keys": 0, "temp_store": 2, "query_only": 0} {
				if got := pragma(t, sh.conn, name); got != want {
					t.Errorf("%s: the %s projector's %s is %d, want %d", layoutName(oneFile), sh.name, name, got, want)
				}
			}
		}
	}
}

// pragma reads an integer pragma on c.
func pragma(t *testing.T, c *project.Conn, name string) int64 {
	t.Helper()
	var v int64
	err := c.Do(func(c *sqlitec.Conn) (err error) {
		v, err = c.QueryInt64("PRAGMA " + name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDurableHWMNeedsFullCheckpoint: while a reader pins an old snapshot of telemetry.db, the
// WAL cannot be fully checkpointed, so the high-water mark is not known to be durable and
// nothing may be pruned on its strength.
func TestDurableHWMNeedsFullCheckpoint(t *testing.T) {
	s := openTest(t, Config{KeepRaw: true, Logger: quietLogger})
	appendLogs(t, s, makeLogs("svc", "a", 1))
	waitProjected(t, s)

	reader, err := sql.Open("sqlite", "file:"+s.TelemetryPath())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var hwm int64
	if err := tx.QueryRow("SELECT raw_id FROM projection_state WHERE id = 1").Scan(&hwm); err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "b", 1)) // a projection commit the pinned reader does not see
	waitProjected(t, s)

	db, err := openOne(context.Background(), dsn(s.TelemetryPath(), commonPragmas...))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := durableHWM(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if got != -1 {
		t.Errorf("durable mark %d while a reader pins the WAL, want -1", got)
	}
	tx.Rollback()
	got, err = durableHWM(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.Stats().ProjectedRawID; got != want {
		t.Errorf("durable mark %d after the reader left, want %d", got, want)
	}
}
