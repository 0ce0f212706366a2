package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// telemetry.db's checkpoints. The projector's connection does not checkpoint on commit
// (wal_autocheckpoint=0): copying a WAL's pages into the database file, with the two fsyncs
// around it, took about a tenth of the projector's CPU and most of the time its thread spent off
// the CPU while catching up. The checkpointer, a goroutine of its own on a connection of its own
// at the projector's priority, runs PASSIVE checkpoints instead, on the other core when there is
// one free: after the projector's slices while ingest is idle (at most every checkpointEvery),
// else every checkpointTick, as its fsyncs share the disk with the group commits'. It also
// publishes the durable projection mark that raw pruning waits for.
//
// A checkpoint that runs while the projector keeps committing never backfills the whole WAL,
// and SQLite only starts the WAL over at a write transaction that finds it fully backfilled. So
// the projector bounds the WAL itself: before a slice's transaction, when the WAL file is larger
// than walLimitBytes (journal_size_limit truncates it to that after every restart), it runs one
// PASSIVE checkpoint of its own, under the checkpointer's lock, which copies what the
// checkpointer has not yet copied, and its transaction then starts the WAL over. A checkpointer
// starved of CPU therefore costs the projector today's work, not an unbounded WAL.
// walLimitBytes bounds telemetry.db's WAL between restarts (about 16,000 4 KiB pages), and
// checkpointEvery spaces the checkpointer's checkpoints, each of which costs two fsyncs;
// checkpointTick is how often it checkpoints without being nudged. Variables for tests.
var (
	walLimitBytes   int64 = 64 << 20
	checkpointEvery       = 200 * time.Millisecond
	checkpointTick        = pruneEvery
)

// checkpointer is shared by the projector (which nudges it and, past the WAL bound, checkpoints
// itself) and the checkpointer goroutine.
type checkpointer struct {
	mu    sync.Mutex    // held by whoever runs a checkpoint
	nudge chan struct{} // a projection slice committed (signals coalesce)

	background atomic.Uint64 // checkpoints the checkpointer ran
	projector  atomic.Uint64 // checkpoints the projector ran to bound the WAL
}

// nudgeCheckpoint tells the checkpointer that the WAL grew, without blocking.
func (s *Store) nudgeCheckpoint() {
	select {
	case s.ckpt.nudge <- struct{}{}:
	default:
	}
}

// walPath is telemetry.db's WAL file.
func (s *Store) walPath() string { return s.path + "-wal" }

// boundWAL runs a checkpoint on the projector's connection when the WAL has outgrown
// walLimitBytes, so that the projector's next transaction starts it over.
func (s *Store) boundWAL(db *sql.DB) error {
	fi, err := os.Stat(s.walPath())
	if err != nil || fi.Size() <= walLimitBytes {
		return nil // no WAL yet (or gone): nothing to bound
	}
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	if _, _, err := checkpoint(context.Background(), db); err != nil {
		return fmt.Errorf("bound the telemetry WAL: %w", err)
	}
	s.ckpt.projector.Add(1)
	return nil
}

// checkpoint runs a PASSIVE checkpoint on db and reports whether it backfilled the whole WAL,
// and the WAL's size in frames.
func checkpoint(ctx context.Context, db *sql.DB) (full bool, frames int64, err error) {
	var busy, log, done int64
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
		return false, 0, fmt.Errorf("checkpoint: %w", err)
	}
	return busy == 0 && done == log, log, nil
}

// runCheckpointer checkpoints telemetry.db when nudged (at most every checkpointEvery) and every
// checkpointTick, at the projector's priority, until ctx ends.
// With pruning on, it publishes the projection mark each full checkpoint made durable. It owns db
// (a telemetry.db connection) and closes it.
func (s *Store) runCheckpointer(ctx context.Context, db *sql.DB) {
	defer close(s.ckptDone)
	defer db.Close()
	runAtPriority(s.cfg.ProjectPriority, func(error) {}, func() { s.checkpointLoop(ctx, db) })
}

func (s *Store) checkpointLoop(ctx context.Context, db *sql.DB) {
	t := time.NewTicker(checkpointTick)
	defer t.Stop()
	last := time.Now() // nothing to checkpoint yet
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.ckpt.nudge:
			if wait := checkpointEvery - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		hwm, err := s.backgroundCheckpoint(ctx, db)
		if err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Debug("store: checkpoint", "err", err)
			}
			continue
		}
		if s.pruneConfigured() && hwm > s.prune.durable.Load() {
			s.prune.durable.Store(hwm)
			s.q.nudge() // an idle writer prunes too
		}
	}
}

// backgroundCheckpoint runs one of the checkpointer's checkpoints and returns the projection mark
// it made durable, or -1.
func (s *Store) backgroundCheckpoint(ctx context.Context, db *sql.DB) (int64, error) {
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	hwm, err := durableHWM(ctx, db)
	if err == nil {
		s.ckpt.background.Add(1)
	}
	return hwm, err
}
