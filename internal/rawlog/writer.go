package rawlog

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
// records in the payload (log records, spans or data points); it feeds Stats and the log.
// Append does not retain payload after it returns, and the caller must not modify payload
// before it returns.
//
// Append returns nil only when the payload is written (and, with SyncFull, fsynced). It returns
// ErrQueueFull or ErrClosed at once without queuing, diskfull.ErrDiskFull (wrapped) when the
// directory is past its Bound or the write failed for lack of space, ErrSyncFailed (wrapped)
// when an fsync of the log failed, this group's or an earlier one's, another wrapped error when
// the write failed otherwise, or ctx.Err() when ctx ended while the request was still queued (it
// is then dropped, not stored). Once the writer has taken the request into a group, Append waits
// for that group's result even if ctx ends, so nil always means stored and an error means not
// stored, but for a failed fsync of the request's own group, after which its row may survive a
// restart (walsync.go).
func (l *Log) Append(ctx context.Context, sig signal.Signal, payload []byte, records int) error {
	if !sig.Valid() {
		return fmt.Errorf("store: append: invalid signal %d", uint8(sig))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b := l.cfg.Bound; b != nil && b.Over() { // keep headroom for what frees space
		return fmt.Errorf("store: append: the data directory is past its size bound (--max-disk): %w", diskfull.ErrDiskFull)
	}
	r := &request{sig: sig, payload: payload, records: records, received: time.Now().UnixNano(), done: make(chan error, 1)}
	if err := l.q.push(r); err != nil {
		if errors.Is(err, ErrQueueFull) {
			l.stats.queueFull.Add(1)
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
// segment log as one group (one pwritev straight from the request buffers) and answers each:
// with SyncFull through the waiter once the group is fsynced, else at once. It stops when the
// queue is closed and drained.
func (l *Log) runWriter() {
	defer close(l.writerDone)
	w := writer{l: l}
	sy := l.syncer // nil unless SyncFull
	if sy != nil {
		go sy.run()
		defer sy.close()
	}
	var buf, live []*request
	for {
		if sy != nil {
			// Waiting for the waiter to take the last group is the writer's work too: the
			// projection policy reads a writer busy all the time as ingest saturating it.
			waitFrom := time.Now()
			sy.waitTaken()
			l.stats.writerBusy.Add(int64(time.Since(waitFrom)))
		}
		batch, ok := l.q.take(buf[:0])
		if !ok {
			return
		}
		if len(batch) == 0 { // nudged: nothing to write, prune if there is any
			w.prune(l.q.idle())
			continue
		}
		busyFrom := time.Now()
		live = w.live(batch, live[:0])
		if len(live) > 0 {
			w.writeGroup(live)
		}
		clear(batch)
		buf = batch
		l.stats.writerBusy.Add(int64(time.Since(busyFrom)))
	}
}

// writer holds the writer goroutine's reusable entries and its pruning state.
type writer struct {
	l       *Log
	entries []seglog.Entry
	checked time.Time // the last look at the segments for pruning
}

// live appends to dst the requests of batch the writer takes, and releases the cancelled ones.
func (w *writer) live(batch, dst []*request) []*request {
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
	w.l.q.release(cancelled, cancelledBytes)
	return dst
}

// writeGroup writes live to the segment log and answers it (or hands it to the waiter).
func (w *writer) writeGroup(live []*request) {
	l := w.l
	lastID, err := w.write(live)
	if err == nil && l.cfg.Bound != nil {
		var n int64
		for _, r := range live {
			n += int64(len(r.payload)) + 32 // the record's header
		}
		l.cfg.Bound.Wrote(n)
	} else if err != nil {
		l.cfg.Logger.Warn("store: group write failed", "requests", len(live), "err", err)
	}
	switch {
	case err == nil && l.syncer != nil:
		l.syncer.add(live, lastID) // answered after the fsync
	case err == nil:
		l.durable(live, lastID)
		l.answer(live, nil)
	default:
		l.stats.commitErrors.Add(1)
		l.answer(live, err)
	}
	w.prune(false)
}

// durable counts batch, written and durable with lastID the highest raw id, and hands it to
// OnDurable; before answering, so an appender sees its request in Stats.
func (l *Log) durable(batch []*request, lastID int64) {
	g := l.stats.committed(batch)
	l.stats.lastID.Store(lastID)
	if l.cfg.OnDurable != nil {
		g.LastID = lastID
		l.cfg.OnDurable(g)
	}
}

// answer releases batch's share of the queue and answers each of its appends with err.
func (l *Log) answer(batch []*request, err error) {
	var bytes int64
	for _, r := range batch {
		bytes += int64(len(r.payload))
	}
	// Release before answering so a caller that retries at once finds room.
	l.q.release(len(batch), bytes)
	for _, r := range batch {
		r.done <- err
	}
}

// write appends batch to the segment log as one group and returns the last id. On error
// nothing of the batch is stored (seglog cuts a failed write back off), but for a failed fsync,
// which is final.
func (w *writer) write(batch []*request) (int64, error) {
	l := w.l
	if hook := l.beforeWrite.Load(); hook != nil {
		(*hook)()
	}
	w.entries = w.entries[:0]
	for _, r := range batch {
		w.entries = append(w.entries, seglog.Entry{Signal: r.sig, Records: r.records, Received: r.received, Payload: r.payload})
	}
	_, last, err := l.seg.Write(w.entries)
	clear(w.entries)
	if err != nil {
		return 0, rawError("write raw log", err)
	}
	l.stats.commits.Add(1)
	return last, nil
}
