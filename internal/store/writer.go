package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Append queues one OTLP Export*ServiceRequest in protobuf encoding and blocks until the
// group holding it is durable (per Config.Sync) or fails. records is the caller's count of
// records in the payload (log records, spans or data points); it feeds Stats and the raw log.
// Append does not retain payload after it returns, and the caller must not modify payload
// before it returns.
//
// Append returns nil only when the payload is committed (and, with SyncFull, fsynced). It returns
// ErrQueueFull or ErrClosed at once without queuing, ErrDiskFull (wrapped) when the commit failed
// for lack of space, ErrSyncFailed (wrapped) when an fsync of the raw log failed, this group's or
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

// runWriter is the single writer goroutine: it takes every queued request, writes them to the
// raw log as one group (one pwritev straight from the request buffers) and answers each: with
// SyncFull through the waiter once the group is fsynced, else at once. It stops when the queue
// is closed and drained.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	w := rawWriter{s: s}
	sy := s.syncer // nil unless SyncFull
	if sy != nil {
		go sy.run()
		defer sy.close()
	}
	var buf, live []*request
	for {
		if sy != nil {
			// Waiting for the waiter to take the last group is the writer's work too: the
			// deferrer reads a writer busy all the time as ingest saturating it.
			waitFrom := time.Now()
			sy.waitTaken()
			s.stats.writerBusy.Add(int64(time.Since(waitFrom)))
		}
		batch, ok := s.q.take(buf[:0])
		if !ok {
			return
		}
		if len(batch) == 0 { // nudged: nothing to write, prune if there is any
			w.prune(s.q.idle())
			continue
		}
		busyFrom := time.Now()
		live = w.live(batch, live[:0])
		if len(live) > 0 {
			w.writeGroup(live)
		}
		clear(batch)
		buf = batch
		s.stats.writerBusy.Add(int64(time.Since(busyFrom)))
	}
}

// live appends to dst the requests of batch the writer takes, and releases the cancelled ones.
func (w *rawWriter) live(batch, dst []*request) []*request {
	var cancelled int
	var cancelledBytes int64
	for _, r := range batch {
		if r.state.CompareAndSwap(stateQueued, stateTaken) {
			dst = append(dst, r)
		} else {
			cancelled++
			cancelledBytes += int64(len(r.payload))
		}
	}
	w.s.q.release(cancelled, cancelledBytes)
	return dst
}

// writeGroup writes live to the raw log and answers it (or hands it to the waiter).
func (w *rawWriter) writeGroup(live []*request) {
	s := w.s
	lastID, err := w.write(live)
	if err == nil {
		s.bound.committed(live)
	} else {
		s.cfg.Logger.Warn("store: group write failed", "requests", len(live), "err", err)
	}
	switch {
	case err == nil && s.syncer != nil:
		s.syncer.add(live, lastID) // answered after the fsync
	case err == nil:
		s.durable(live, lastID)
		s.answer(live, nil)
	default:
		s.stats.commitErrors.Add(1)
		s.answer(live, err)
	}
	w.prune(false)
}

// durable counts batch, written and durable with lastID the highest raw id, and lets the
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

// rawWriter holds the writer goroutine's reusable entries.
type rawWriter struct {
	s       *Store
	entries []seglog.Entry
}

// write appends batch to the raw log as one group and returns the last id. On error nothing of
// the batch is stored (seglog cuts a failed write back off), but for a failed fsync, which is
// final.
func (w *rawWriter) write(batch []*request) (int64, error) {
	s := w.s
	if hook := s.beforeWrite.Load(); hook != nil {
		(*hook)()
	}
	w.entries = w.entries[:0]
	for _, r := range batch {
		w.entries = append(w.entries, seglog.Entry{Signal: r.sig, Records: r.records, Received: r.received, Payload: r.payload})
	}
	_, last, err := s.raw.Write(w.entries)
	clear(w.entries)
	if err != nil {
		return 0, rawError("write raw log", err)
	}
	s.stats.commits.Add(1)
	return last, nil
}

// rawError wraps err from the raw log: lack of space as ErrDiskFull, a failed fsync (final) as
// ErrSyncFailed.
func rawError(action string, err error) error {
	if errors.Is(err, seglog.ErrSyncFailed) {
		return fmt.Errorf("store: %s: %w: %w", action, ErrSyncFailed, err)
	}
	return diskfull.Classify(action, err)
}
