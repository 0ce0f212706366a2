package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Data retention. The projected tables would grow without bound (a mixed load wrote ~760 MB in
// 25 s), so a retainer goroutine deletes their oldest rows: after Config.Retention, and sooner
// while the data directory uses more than Config.MaxDiskBytes (or MaxDiskShare of its
// filesystem).
//
// Age. Record times are the client's and may be anything, so age is arrival order: every
// markEvery the retainer writes a mark to each projected database, retention_marks (schema
// version 10): the time and the highest id of each table then. Rows at or below the newest mark
// older than the retention are due. Log, span and points ids grow with projection, so a mark's
// ids split the tables into older and newer rows exactly.
//
// Steps. Each step deletes at most retainStep rows of a table (logs with their log_text groups
// and log_blocks, spans with their events, links and trace_chunks, each points table with its
// point_blocks) in one transaction on the projector's own connection, between two of its slices:
// the projector waits for one step at most and ingest, which writes the raw log, not at all. The
// newest row of a table is never deleted, so SQLite's next rowid stays the id the projector
// assigns (project/rowids.go). Freed pages go to each file's freelist and the next rows reuse them: no
// VACUUM, whose copy of the file would stall the projector for as long as it takes; the files
// stop growing once retention is reached (scripts/soak-serve.sh).
//
// Size. The used size is each database's pages minus its free pages, plus the WAL files. Over
// the bound, a step deletes the oldest rows whatever their age or marks, and the writer prunes
// projected raw segments without waiting for Config.RawRetention; meanwhile Append answers
// ErrDiskFull (serve's 507), so the filesystem keeps room for that to run (diskbound.go), and
// ingest resumes by itself once it has freed space.
// Resources, scopes and metric streams that no remaining row names go too, in sweeps of their
// own that keep the projector's id caches right (retention_ids.go).

const (
	// DefaultRetention is how long projected data is kept.
	DefaultRetention = 24 * time.Hour
	// retainEvery is the retainer's period while nothing is due.
	retainEvery = time.Second
	// retainStep bounds the rows of each table one step deletes (a block of log or span ids).
	retainStep = 4096
	// maxMarks bounds how many marks a retention period holds; markEvery is at least a second.
	maxMarks = 512
)

// retainState is the retainer's state shared with the writer.
type retainState struct {
	overDisk atomic.Bool        // used bytes past the bound: prune projected raw rows at once
	deleted  atomic.Uint64      // rows the retainer deleted
	sweeps   [maxShards]idSweep // per shard: resources, scopes and metric streams (retention_ids.go)
	done     chan struct{}
	stop     context.CancelFunc
}

// retainTable is a table whose rows the retainer deletes by id, with what goes with them.
type retainTable struct {
	name, col string // the table and its mark column in retention_marks
	part      schema.Parts
	also      func(lo, hi int64) string // deletes of the rows that go with ids lo..hi
}

var retainTables = []retainTable{
	{name: "logs", col: "log_id", part: schema.LogsMetrics, also: func(lo, hi int64) string {
		// log_text groups and log_blocks blocks wholly at or below hi.
		return fmt.Sprintf(`DELETE FROM log_text WHERE rowid <= %d; DELETE FROM log_blocks WHERE block <= %d;`,
			(hi+1)>>schema.LogTextShift-1, (hi+1)>>schema.LogBlockShift-1)
	}},
	{name: "spans", col: "span_id", part: schema.Traces, also: func(lo, hi int64) string {
		return fmt.Sprintf(`DELETE FROM span_events WHERE span_row_id BETWEEN %[1]d AND %[2]d;
			DELETE FROM span_links WHERE span_row_id BETWEEN %[1]d AND %[2]d;
			DELETE FROM trace_chunks WHERE rowid IN (SELECT rowid FROM trace_chunks ORDER BY rowid LIMIT %[3]d) AND last_span_id <= %[2]d;`,
			lo, hi, 2*retainStep)
	}},
}

func init() {
	for i, t := range schema.PointTables {
		retainTables = append(retainTables, retainTable{name: t, col: fmt.Sprintf("point%d_id", i), part: schema.LogsMetrics,
			also: func(lo, hi int64) string {
				return fmt.Sprintf(`DELETE FROM point_blocks WHERE point_table = '%s' AND block <= %d;`, t, (hi+1)>>schema.PointBlockShift-1)
			}})
	}
}

// markEvery is the period of the retention marks: a 512th of the retention, at least a second.
func (c Config) markEvery() time.Duration { return max(time.Second, c.Retention/maxMarks) }

// startRetainer starts the retainer goroutine; Close stops it (stopRetainer).
func (s *Store) startRetainer() {
	s.retain.done = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	s.retain.stop = cancel
	if limit, err := s.maxDisk(); err == nil {
		s.bound.limit.Store(limit) // the projector's slices size to it from the first
	}
	if s.cfg.NoProjection || s.cfg.Retention < 0 {
		close(s.retain.done)
		return
	}
	go s.runRetainer(ctx)
}

func (s *Store) stopRetainer() {
	if s.retain.stop != nil {
		s.retain.stop()
		<-s.retain.done
	}
}

// runRetainer marks and deletes until ctx ends: a step after another while one is due, else
// once every retainEvery.
func (s *Store) runRetainer(ctx context.Context) {
	defer close(s.retain.done)
	lastMark := make([]time.Time, len(s.shards))
	for ctx.Err() == nil {
		over, admitOver, bounded, err := s.overDisk()
		if err != nil {
			s.cfg.Logger.Warn("store: retention: measure the data directory", "err", err)
		}
		s.retain.overDisk.Store(over || admitOver)
		if over || admitOver {
			// Spare raw segments are room kept for the raw log's next rolls; past the bound the
			// rest of the directory needs it more.
			if _, err := s.raw.ReleaseSpares(); err != nil {
				s.cfg.Logger.Warn("store: retention: release spare raw segments", "err", err)
			}
		}
		busy := false
		for i, sh := range s.shards {
			if time.Since(lastMark[i]) >= s.cfg.markEvery() {
				if err := sh.conn.Do(func(c *sqlitec.Conn) error { return mark(c, sh.parts) }); err != nil {
					s.cfg.Logger.Warn("store: retention: mark", "db", sh.name, "err", err)
				} else {
					lastMark[i] = time.Now()
				}
			}
			n, err := s.retainStep(sh, over)
			if err != nil {
				s.cfg.Logger.Warn("store: retention: delete", "db", sh.name, "err", err)
			}
			more, err := s.sweepStep(sh)
			if err != nil {
				s.cfg.Logger.Warn("store: retention: sweep unused resources, scopes and metrics", "db", sh.name, "err", err)
			}
			busy = busy || n > 0 || more
			if over || admitOver {
				if err := s.truncateWAL(sh); err != nil {
					s.cfg.Logger.Warn("store: retention: checkpoint", "db", sh.name, "err", err)
				}
			}
		}
		wait := retainEvery
		switch {
		case busy:
			wait = 0
		case bounded:
			wait = boundEvery
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// mark writes a retention mark: now and the highest id of each table of ps.
func mark(c *sqlitec.Conn, ps schema.Parts) error {
	cols, vals := "at_unix_nano", fmt.Sprint(time.Now().UnixNano())
	for _, t := range retainTables {
		cols += ", " + t.col
		if ps&t.part == 0 {
			vals += ", 0"
		} else {
			vals += ", COALESCE((SELECT max(rowid) FROM " + t.name + "), 0)"
		}
	}
	return c.Exec("INSERT OR REPLACE INTO retention_marks(" + cols + ") SELECT " + vals)
}

// retainStep deletes, in one transaction on sh's connection, up to retainStep of the oldest due
// rows of each of its tables, and the marks that no longer bound anything. over: the data
// directory is past its size bound, so the oldest mark is due whatever its age. It returns the
// rows deleted.
func (s *Store) retainStep(sh *shard, over bool) (int64, error) {
	var deleted int64
	err := sh.conn.Do(func(c *sqlitec.Conn) error {
		cutoff := time.Now().Add(-s.cfg.Retention).UnixNano()
		at, err := c.QueryInt64(fmt.Sprintf(`SELECT COALESCE((SELECT max(at_unix_nano) FROM retention_marks WHERE at_unix_nano <= %d), 0)`, cutoff))
		if err != nil || at == 0 && !over {
			return err
		}
		if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			return err
		}
		if over { // the oldest rows, marked or not: a mark may be minutes away
			at = 0
		}
		if deleted, err = deleteTo(c, sh.parts, at); err == nil && at > 0 {
			err = c.Exec(fmt.Sprintf(`DELETE FROM retention_marks WHERE at_unix_nano < %d`, at))
		}
		if err == nil {
			err = c.Exec("COMMIT")
		}
		if err != nil {
			_ = c.Exec("ROLLBACK")
			deleted = 0
		}
		return err
	})
	s.retain.deleted.Add(uint64(deleted))
	return deleted, err
}

// deleteTo deletes, inside a transaction, up to retainStep rows of each table of ps at or below
// the mark written at at (at 0: the oldest rows, whatever the marks), never a table's newest
// row. When every such row is gone the mark itself goes, so that the next one becomes due.
func deleteTo(c *sqlitec.Conn, ps schema.Parts, at int64) (int64, error) {
	var deleted int64
	left := false
	for _, t := range retainTables {
		if ps&t.part == 0 {
			continue
		}
		bound, err := c.QueryInt64(fmt.Sprintf(`SELECT COALESCE((SELECT %s FROM retention_marks WHERE at_unix_nano = %d), %d)`, t.col, at, int64(math.MaxInt64)))
		if err != nil {
			return 0, err
		}
		lo, err := c.QueryInt64(`SELECT COALESCE(min(rowid), 0) FROM ` + t.name)
		if err != nil {
			return 0, err
		}
		top, err := c.QueryInt64(`SELECT COALESCE(max(rowid), 0) FROM ` + t.name)
		if err != nil {
			return 0, err
		}
		hi := min(bound, lo+retainStep-1, top-1)
		if lo == 0 || hi < lo {
			continue
		}
		left = left || hi < bound && hi < top-1
		if err := c.Exec(fmt.Sprintf(`DELETE FROM %s WHERE rowid BETWEEN %d AND %d; %s`, t.name, lo, hi, t.also(lo, hi))); err != nil {
			return 0, fmt.Errorf("delete from %s: %w", t.name, err)
		}
		deleted += hi - lo + 1
	}
	if !left && at > 0 {
		if err := c.Exec(fmt.Sprintf(`DELETE FROM retention_marks WHERE at_unix_nano = %d`, at)); err != nil {
			return 0, err
		}
	}
	return deleted, nil
}

// maxDisk returns the size bound of the data directory in bytes (0: none).
func (s *Store) maxDisk() (int64, error) {
	limit := s.cfg.MaxDiskBytes
	if s.cfg.MaxDiskShare > 0 {
		size, err := fsSize(s.cfg.Dir)
		if err != nil {
			return 0, err
		}
		if b := int64(float64(size) * s.cfg.MaxDiskShare); limit == 0 || b < limit {
			limit = b
		}
	}
	return limit, nil
}

// overDisk reports whether the data directory is past its size bound (used: the projected
// data is due whatever its age; admit: see diskBound), and whether there is a bound. It
// publishes the measure to Append (diskbound.go).
func (s *Store) overDisk() (used, admit, bounded bool, err error) {
	limit, err := s.maxDisk()
	if err != nil || limit == 0 {
		return false, false, false, err
	}
	u, err := s.UsedBytes()
	if err != nil {
		return false, false, true, err
	}
	a, err := s.sizes(true)
	if err != nil {
		return false, false, true, err
	}
	s.bound.measure(limit, a)
	return u > limit, a > limit, true, nil
}

// UsedBytes returns the bytes the data directory's databases use: their pages but the free
// ones (which later rows reuse), plus their WAL files.
func (s *Store) UsedBytes() (int64, error) { return s.sizes(false) }

// sizes returns the bytes of the projected databases' pages, less their free pages, of their
// WAL files and of the raw log's segments. With rawFreeOnly the free pages are counted, as
// Append's bound counts them: the free pages of a file are room for its own rows only, so
// ingest cannot use them.
func (s *Store) sizes(rawFreeOnly bool) (int64, error) {
	used := s.raw.Stats().DiskBytes
	for _, schema := range []string{"main", "traces"} {
		if schema == "traces" && len(s.shards) < 2 {
			continue
		}
		var n [3]int64 // pages, free pages, page size
		for i, pragma := range []string{"page_count", "freelist_count", "page_size"} {
			if err := s.readDB.QueryRow("PRAGMA " + schema + "." + pragma).Scan(&n[i]); err != nil {
				return 0, fmt.Errorf("read the pages of %s: %w", schema, err)
			}
		}
		if rawFreeOnly {
			n[1] = 0
		}
		used += (n[0] - n[1]) * n[2]
	}
	wals, err := filepath.Glob(filepath.Join(s.cfg.Dir, "*-wal"))
	if err != nil {
		return 0, err
	}
	for _, w := range wals {
		if fi, err := os.Stat(w); err == nil {
			used += fi.Size()
		} else if !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	return used, nil
}
