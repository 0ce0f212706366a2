package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/otelbench/otelbench/internal/rawlog"
)

// Raw pruning is the raw log's (rawlog's prune.go): it deletes whole segments up to the mark
// the store passes it (rawlog.Log.SetProjected), once past Config.RawRetention. The store's
// part is that mark, which must be durable in every projected database (telemetry.db, and
// traces.db in the two-file layout: each mark passes every raw row up to it, whatever its
// signal). They commit at synchronous=NORMAL, which survives a process crash but not a power
// loss until the WAL is synced, so the prune watcher (its own goroutine and a connection to each)
// reads a database's high-water mark and then runs a PASSIVE checkpoint: a checkpoint that
// backfills the whole WAL has synced it first, so the mark read before it is durable.
const (
	// DefaultRawRetention is how long a projected raw payload is kept.
	DefaultRawRetention = rawlog.DefaultRetention
	// pruneEvery is the prune watcher's period.
	pruneEvery = time.Second
)

// pruneConfigured reports whether raw rows are pruned at all.
func (s *Store) pruneConfigured() bool { return !s.cfg.KeepRaw && !s.cfg.NoProjection }

// PrunedRawID returns the raw id at or below which every raw payload has been deleted (0 when
// none has).
func (s *Store) PrunedRawID() int64 { return s.raw.Pruned() }

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
		s.raw.SetProjected(hwm)
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
