package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/signal"
)

// Append queues one OTLP Export*ServiceRequest in protobuf encoding and blocks until the group
// commit holding it is durable (per Config.Sync) or fails. records is the caller's count of
// records in the payload (log records, spans or data points); it feeds Stats and raw.records.
// Append does not retain payload after it returns, and the caller must not modify payload
// before it returns.
//
// Append returns nil only when the payload is committed (and, with SyncFull, fsynced). It returns
// ErrQueueFull or ErrClosed at once without queuing, ErrDiskFull (wrapped) when the commit failed
// for lack of space, ErrSyncFailed (wrapped) when an fsync of raw.db-wal failed, this group's or
// an earlier one's, another wrapped error when the commit failed otherwise, or ctx.Err() when ctx
// ended while the request was still queued (it is then dropped, not stored). Once the writer has
// taken the request into a commit, Append waits for that commit's result even if ctx ends, so nil
// always means stored and an error means not stored, but for a failed fsync of the request's own
// group, after which its row may survive a restart (walsync.go).
func (s *Store) Append(ctx context.Context, sig signal.Signal, payload []byte, records int) error {
	if !sig.Valid() {
		return fmt.Errorf("store: append: invalid signal %d", uint8(sig))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.bound.over() { // keep headroom for what frees space (diskbound.go)
		return fmt.Errorf("store: append: the data directory is past its size bound (--max-disk): %w", ErrDiskFull)
	}
	r := &request{sig: sig, payload: payload, records: records, received: time.Now().UnixNano(), done: make(chan error, 1)}
	if err := s.q.push(r); err != nil {
		if errors.Is(err, ErrQueueFull) {
			s.stats.queueFull.Add(1)
		}
		return err
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateCancelled) {
			return ctx.Err()
		}
		return <-r.done
	}
}

// runWriter is the single writer goroutine: it owns writeDB, takes every queued request, commits
// them in one transaction and answers each. It stops when the queue is closed and drained.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	w := rawWriter{s: s}
	defer w.closeStmts()
	sy := s.syncer // nil unless SyncFull
	if sy != nil {
		go sy.run()
		defer func() {
			if err := sy.close(); err != nil {
				s.cfg.Logger.Warn("store: close raw WAL descriptor", "err", err)
			}
		}()
	}
	var buf, live []*request
	for {
		if sy != nil {
			// Waiting for the syncer to take the last group is the writer's work too: the
			// deferrer reads a writer busy all the time as ingest saturating it.
			waitFrom := time.Now()
			sy.waitTaken()
			s.stats.writerBusy.Add(int64(time.Since(waitFrom)))
		}
		batch, ok := s.q.take(buf[:0])
		if !ok {
			return
		}
		if len(batch) == 0 { // nudged: nothing to commit, prune if there is room
			if w.pruneIdle() && s.q.idle() {
				s.q.nudge() // more to prune: come back unless requests arrive first
			}
			continue
		}
		busyFrom := time.Now()
		live = live[:0]
		var cancelled int
		var cancelledBytes int64
		for _, r := range batch {
			if r.state.CompareAndSwap(stateQueued, stateTaken) {
				live = append(live, r)
			} else {
				cancelled++
				cancelledBytes += int64(len(r.payload))
			}
		}
		s.q.release(cancelled, cancelledBytes)
		if len(live) > 0 {
			var err error
			if sy != nil {
				err = sy.failed() // logged once, when the fsync failed
			}
			if err == nil {
				if err = w.commit(live); err == nil {
					s.bound.committed(live)
				} else {
					s.cfg.Logger.Warn("store: group commit failed", "requests", len(live), "err", err)
				}
			}
			switch {
			case err == nil && sy != nil:
				sy.add(live, s.nextRawID-1) // answered after the fsync
			case err == nil:
				s.durable(live, s.nextRawID-1)
				s.answer(live, nil)
			default:
				s.stats.commitErrors.Add(1)
				s.answer(live, err)
			}
		}
		clear(batch)
		buf = batch
		s.stats.writerBusy.Add(int64(time.Since(busyFrom)))
	}
}

// durable counts batch, committed and durable with lastID the highest raw id, and lets the
// projectors read up to lastID; before answering, so an appender sees its request in Stats.
func (s *Store) durable(batch []*request, lastID int64) {
	s.stats.committed(batch)
	s.stats.lastRawID.Store(lastID)
	s.wakeProjector()
}

// answer releases batch's share of the queue and answers each of its appends with err.
func (s *Store) answer(batch []*request, err error) {
	var bytes int64
	for _, r := range batch {
		bytes += int64(len(r.payload))
	}
	// Release before answering so a caller that retries at once finds room.
	s.q.release(len(batch), bytes)
	for _, r := range batch {
		r.done <- err
	}
}

// rawWriter holds the writer goroutine's prepared multi-row insert into raw.
type rawWriter struct {
	s   *Store
	ins *bulkInsert
}

// commit stores batch in one transaction. On error nothing of the batch is stored.
func (w *rawWriter) commit(batch []*request) error {
	s := w.s
	if w.ins == nil {
		ins, err := newBulkInsert(s.writeDB, "raw", "id", "signal", "records", "received_unix_nano", "payload")
		if err != nil {
			return diskfull.Classify("prepare", err)
		}
		w.ins = ins
	}
	prune := false
	if s.pruneConfigured() {
		if err := w.preparePrune(); err != nil {
			s.cfg.Logger.Warn("store: prune raw", "err", err)
		} else {
			prune = true
		}
	}
	tx, err := s.writeDB.Begin()
	if err != nil {
		return diskfull.Classify("begin", err)
	}
	id := s.nextRawID
	for _, r := range batch {
		if err = w.ins.add(tx, id, int64(r.sig), int64(r.records), r.received, r.payload); err != nil {
			break
		}
		id++
	}
	if err == nil {
		err = w.ins.flush(tx)
	}
	if err != nil {
		w.ins.reset()
		tx.Rollback()
		return diskfull.Classify("insert raw", err)
	}
	// Prune projected rows in the same transaction: no extra fsync, and at least twice the
	// batch's ids, so pruning keeps up whenever projection does. A failed prune statement is
	// rolled back alone; the batch still commits.
	prunedTo := int64(-1)
	if lo, hi, ok := s.pruneTarget(max(pruneMinIDs, 2*int64(len(batch)))); ok && prune {
		if to, perr := w.pruneIn(tx, lo, hi); perr != nil {
			s.cfg.Logger.Warn("store: prune raw", "err", perr)
		} else {
			prunedTo = to
		}
	}
	if err := tx.Commit(); err != nil {
		return diskfull.Classify("commit", err)
	}
	if prunedTo >= 0 {
		s.prune.pruned.Store(prunedTo)
	}
	s.nextRawID = id
	s.stats.commits.Add(1)
	return nil
}

func (w *rawWriter) closeStmts() {
	if w.ins != nil {
		w.ins.close()
	}
	w.s.prune.close()
}
