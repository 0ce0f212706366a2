package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/diskfull"
)

// Raw pruning. raw.db holds every accepted payload; once a payload is projected and the
// projection is durable, the raw copy is only kept for Config.RawRetention, then deleted so the
// file stops growing (SQLite reuses the freed pages; the file does not shrink).
//
// Crash safety: a raw row is deleted only when its id is at or below a projection high-water
// mark that is durable on disk in every projected database (telemetry.db, and traces.db in the
// two-file layout: each mark passes every raw row up to it, whatever its signal). They commit at
// synchronous=NORMAL, which survives a process crash but not a power loss until the WAL is
// synced, so the prune watcher (its own goroutine and a connection to each) reads a database's
// high-water mark and then runs a PASSIVE checkpoint: a checkpoint that backfills the whole WAL
// has synced it first, so the mark read before it is durable. Only then does the writer
// goroutine, which owns raw.db, delete up to the lowest of them.
// The deletes ride in the group commit's own transaction (no extra fsync), bounded per commit,
// and in bounded steps of their own when the writer is idle.
const (
	// DefaultRawRetention is how long a projected raw payload is kept.
	DefaultRawRetention = 10 * time.Minute
	// pruneEvery is the prune watcher's period.
	pruneEvery = time.Second
	// pruneMinIDs and pruneIdleIDs bound the raw ids one prune covers: in a group commit
	// max(pruneMinIDs, 2×batch) so pruning outpaces ingest whenever projection does; alone, when
	// the writer is idle, pruneIdleIDs.
	pruneMinIDs  = 256
	pruneIdleIDs = 4096
)

// pruneState is shared by the prune watcher (which publishes durable) and the writer goroutine
// (which owns lo and the statements).
type pruneState struct {
	durable atomic.Int64 // projected raw ids <= durable are durable in every projected database
	pruned  atomic.Int64 // every raw id <= pruned is deleted, but for those in kept
	kept    keptRaw      // raw ids never pruned here: rows no projector could project (unprojectable.go)
	keep    []int64      // scratch for the writer: kept ids in the range it prunes

	firstFresh, del, count *sql.Stmt // on writeDB, prepared by the writer (count: pruneTotalsSQL)
}

// pruneConfigured reports whether raw rows are pruned at all.
func (s *Store) pruneConfigured() bool { return !s.cfg.KeepRaw && !s.cfg.NoProjection }

// PrunedRawID returns the raw id at or below which every raw payload has been deleted (0 when
// none has), but for the rows no projector could project, which are kept (unprojectable.go).
func (s *Store) PrunedRawID() int64 { return s.prune.pruned.Load() }

// loadPruneState reads how far raw.db was pruned before Open.
func (s *Store) loadPruneState(ctx context.Context) error {
	var minID sql.NullInt64
	for after := int64(-1); ; after = minID.Int64 { // past the kept rows
		if err := s.writeDB.QueryRowContext(ctx, `SELECT min(id) FROM raw WHERE id > ?`, after).Scan(&minID); err != nil {
			return diskfull.Classify("read raw prune state", err)
		}
		if !minID.Valid || !s.prune.kept.has(minID.Int64) {
			break
		}
	}
	if minID.Valid {
		s.prune.pruned.Store(minID.Int64 - 1)
	} else {
		s.prune.pruned.Store(s.nextRawID - 1) // empty: everything up to the last id is gone
	}
	return nil
}

// runPruneWatch publishes the durable projection high-water mark every pruneEvery until ctx
// ends. It owns dbs (a connection to each projected database, in shard order) and closes them.
func (s *Store) runPruneWatch(ctx context.Context, dbs []*sql.DB) {
	defer close(s.pruneDone)
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hwm := int64(-1)
		for i, db := range dbs {
			h, err := durableHWM(ctx, db)
			if err != nil {
				if ctx.Err() == nil {
					s.cfg.Logger.Debug("store: prune watch", "db", s.shards[i].name, "err", err)
				}
				h = -1
			}
			if i == 0 || h < hwm {
				hwm = h
			}
		}
		if hwm > s.prune.durable.Load() {
			s.prune.durable.Store(hwm)
			s.q.nudge() // an idle writer prunes too
		}
	}
}

// durableHWM returns the projection high-water mark if a full checkpoint made it durable, else
// -1.
func durableHWM(ctx context.Context, db *sql.DB) (int64, error) {
	var hwm int64
	if err := db.QueryRowContext(ctx, `SELECT raw_id FROM projection_state WHERE id = 1`).Scan(&hwm); err != nil {
		return -1, fmt.Errorf("read projection state: %w", err)
	}
	var busy, log, done int64
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
		return -1, fmt.Errorf("checkpoint: %w", err)
	}
	if busy != 0 || done != log { // a reader holds back part of the WAL: maybe not synced
		return -1, nil
	}
	return hwm, nil
}

// pruneTarget returns the highest raw id the writer may delete now, given at most limit ids past
// the pruned mark, and whether there is anything to delete.
func (s *Store) pruneTarget(limit int64) (lo, hi int64, ok bool) {
	lo = s.prune.pruned.Load()
	hi = min(s.prune.durable.Load(), lo+limit)
	return lo, hi, hi > lo
}

// pruneIn deletes, inside tx, the raw rows in (lo, hi] received before the retention cutoff,
// stopping at the first younger row. It returns the new pruned mark (unchanged when nothing
// qualifies). The caller stores it once tx commits.
// preparePrune must have succeeded first.
func (w *rawWriter) pruneIn(tx *sql.Tx, lo, hi int64) (int64, error) {
	s := w.s
	ps := &s.prune
	cutoff := s.rawCutoff() // sooner past the size bound (retention.go)
	var fresh sql.NullInt64
	if err := tx.Stmt(ps.firstFresh).QueryRow(lo, hi, cutoff).Scan(&fresh); err != nil {
		return lo, err
	}
	if fresh.Valid {
		hi = fresh.Int64 - 1
	}
	if hi <= lo {
		return lo, nil
	}
	// Around the kept rows: (lo, k1-1], (k1, k2-1], ..., (kn, hi].
	del := tx.Stmt(ps.del)
	ps.keep = ps.kept.in(ps.keep[:0], lo, hi)
	from := lo
	for _, k := range append(ps.keep, hi+1) {
		if k-1 > from {
			if _, err := tx.Stmt(ps.count).Exec(from+1, k-1); err != nil {
				return lo, err
			}
			if _, err := del.Exec(from, k-1); err != nil {
				return lo, err
			}
		}
		from = k
	}
	return hi, nil
}

// preparePrune prepares the prune statements on writeDB, once. It must run outside a
// transaction: database/sql cannot prepare on the single connection a transaction holds.
func (w *rawWriter) preparePrune() error {
	ps := &w.s.prune
	if ps.del != nil {
		return nil
	}
	first, err := w.s.writeDB.Prepare(`SELECT min(id) FROM raw WHERE id > ? AND id <= ? AND received_unix_nano >= ?`)
	if err != nil {
		return fmt.Errorf("prepare prune: %w", err)
	}
	del, err := w.s.writeDB.Prepare(`DELETE FROM raw WHERE id > ? AND id <= ?`)
	if err != nil {
		first.Close()
		return fmt.Errorf("prepare prune: %w", err)
	}
	count, err := w.s.writeDB.Prepare(pruneTotalsSQL)
	if err != nil {
		first.Close()
		del.Close()
		return fmt.Errorf("prepare prune: %w", err)
	}
	ps.firstFresh, ps.del, ps.count = first, del, count
	return nil
}

// pruneIdle runs one bounded prune in its own transaction, when the writer has nothing queued.
// It reports whether it deleted anything (there may be more).
func (w *rawWriter) pruneIdle() bool {
	s := w.s
	lo, hi, ok := s.pruneTarget(pruneIdleIDs)
	if !ok || !s.pruneConfigured() {
		return false
	}
	if err := w.preparePrune(); err != nil {
		s.cfg.Logger.Warn("store: prune raw", "err", err)
		return false
	}
	tx, err := s.writeDB.Begin()
	if err != nil {
		s.cfg.Logger.Warn("store: prune raw", "err", err)
		return false
	}
	to, err := w.pruneIn(tx, lo, hi)
	if err != nil || to == lo {
		tx.Rollback()
		if err != nil {
			s.cfg.Logger.Warn("store: prune raw", "err", err)
		}
		return false
	}
	if err := tx.Commit(); err != nil {
		s.cfg.Logger.Warn("store: prune raw", "err", diskfull.Classify("commit prune", err))
		return false
	}
	s.prune.pruned.Store(to)
	return true
}

func (ps *pruneState) close() {
	for _, st := range []*sql.Stmt{ps.firstFresh, ps.del, ps.count} {
		if st != nil {
			st.Close()
		}
	}
}
