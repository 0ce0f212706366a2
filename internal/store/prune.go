package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// Raw pruning. The raw log holds every accepted payload; once a payload is projected and the
// projection is durable, the raw copy is only kept for Config.RawRetention, then deleted so the
// log stops growing. The log is deleted in whole segments (seglog.Log.DeleteThrough): a segment
// goes once every record in it is projected durably by every projector and its newest record is
// older than the retention (at once past the size bound).
//
// Crash safety: a segment is deleted only when its last id is at or below a projection
// high-water mark that is durable on disk in every projected database (telemetry.db, and
// traces.db in the two-file layout: each mark passes every raw row up to it, whatever its
// signal). They commit at synchronous=NORMAL, which survives a process crash but not a power
// loss until the WAL is synced, so the prune watcher (its own goroutine and a connection to each)
// reads a database's high-water mark and then runs a PASSIVE checkpoint: a checkpoint that
// backfills the whole WAL has synced it first, so the mark read before it is durable. Only then
// does the writer goroutine delete up to the lowest of them, between two groups or when idle.
// The segments' totals are added to the pruned totals, written atomically, before the
// segments are removed (totals.go).
const (
	// DefaultRawRetention is how long a projected raw payload is kept.
	DefaultRawRetention = 10 * time.Minute
	// pruneEvery is the prune watcher's period.
	pruneEvery = time.Second
	// pruneCheckEvery is the least time between two of the writer's looks at the segments
	// while it writes groups (the prune watcher nudges it when the mark moves).
	pruneCheckEvery = 100 * time.Millisecond
)

// pruneState is shared by the prune watcher (which publishes durable) and the writer goroutine
// (which owns totals and deletes).
type pruneState struct {
	durable atomic.Int64 // projected raw ids <= durable are durable in every projected database
	pruned  atomic.Int64 // every raw id <= pruned is deleted
	totals  prunedTotals // what the deleted segments held (totals.go); the writer's
	checked time.Time    // the writer's last look at the segments
}

// pruneConfigured reports whether raw rows are pruned at all.
func (s *Store) pruneConfigured() bool { return !s.cfg.KeepRaw && !s.cfg.NoProjection }

// PrunedRawID returns the raw id at or below which every raw payload has been deleted (0 when
// none has).
func (s *Store) PrunedRawID() int64 { return s.prune.pruned.Load() }

// loadPruneState reads the pruned totals, finishes a deletion a crash interrupted (the totals
// already count those segments) and reads how far the raw log was pruned before Open.
func (s *Store) loadPruneState() error {
	t, err := readPrunedTotals(s.rawDir)
	if err != nil {
		return err
	}
	s.prune.totals = t
	if t.Through > 0 {
		if _, _, err := s.raw.DeleteThrough(t.Through); err != nil {
			return rawError("finish deleting pruned segments", err)
		}
	}
	s.prune.pruned.Store(s.raw.Segments()[0].First - 1)
	return nil
}

// prune deletes the segments that are projected, durable in every projected database and past
// the raw retention. idle says the writer has nothing queued: then the active segment may go
// too (a new one is started), else only sealed ones, and the look is rate-limited.
func (w *rawWriter) prune(idle bool) {
	s := w.s
	if !s.pruneConfigured() || s.prune.durable.Load() <= s.prune.pruned.Load() {
		return
	}
	if now := time.Now(); !idle && now.Sub(s.prune.checked) < pruneCheckEvery {
		return
	} else {
		s.prune.checked = now
	}
	segs := s.raw.Segments()
	if !idle {
		segs = segs[:len(segs)-1]
	}
	hwm, cutoff, t := s.prune.durable.Load(), s.rawCutoff(), s.prune.totals
	through := int64(0)
	for _, sg := range segs {
		if sg.Last < sg.First || sg.Last > hwm || (sg.Last > t.Through && sg.LastReceived >= cutoff) {
			break
		}
		if sg.Last > t.Through {
			t.add(sg.Counts)
		}
		through = sg.Last
	}
	if through <= s.prune.pruned.Load() {
		return
	}
	if through > t.Through {
		t.Through = through
		if err := writePrunedTotals(s.rawDir, t); err != nil {
			s.cfg.Logger.Warn("store: prune raw", "err", err)
			return
		}
		s.prune.totals = t
	}
	if _, _, err := s.raw.DeleteThrough(through); err != nil {
		s.cfg.Logger.Warn("store: prune raw", "err", rawError("delete segments", err))
		return
	}
	s.prune.pruned.Store(s.raw.Segments()[0].First - 1)
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
