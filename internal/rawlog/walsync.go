package rawlog

import (
	"context"
	"sync"
)

// durableWaiter answers the writer's groups once the raw log has made them durable (SyncFull),
// off the writer's path. The writer writes a group to the raw log (seglog), whose syncer
// fdatasyncs the segment beside it, hands the group to the waiter and writes the next group
// while the fsync runs; the waiter waits for the fsync that covers the group's last id
// (seglog.Log.WaitDurable) and only then answers its appends. The writer keeps at most one group
// ahead of the waiter (waitTaken): the queue fills meanwhile, so groups stay as big as when each
// write waited for its own fsync, and the writer's work on one group overlaps the disk's flush of
// the one before.
//
// The projectors read raw rows only up to the log's durable mark, so a power loss cannot leave
// projected rows whose raw row was never durable.
//
// A failed fsync is final (the lesson of PostgreSQL's "fsyncgate"): Linux may have dropped the
// dirty pages it failed to write, so a later fsync that succeeds proves nothing about them. The
// raw log makes the failure sticky: the waiter fails the groups it held, and every later write
// fails, until the log is reopened (ErrSyncFailed; Log.Failed, which serve's /healthz
// reports through the store). Those groups' records were written, so they may be in the raw log after a restart
// although their appends failed: the one case where an error does not mean "not stored".
type durableWaiter struct {
	l *Log

	mu      sync.Mutex
	pending []*request // written, waiting for the fsync that covers lastID
	lastID  int64      // the highest raw id written
	closed  bool

	wake  chan struct{} // capacity 1: groups were handed over, or close was called
	taken chan struct{} // capacity 1: the waiter took the pending groups
	done  chan struct{}
}

func newDurableWaiter(l *Log) *durableWaiter {
	return &durableWaiter{l: l, wake: make(chan struct{}, 1), taken: make(chan struct{}, 1), done: make(chan struct{})}
}

// add hands over a written group whose highest raw id is lastID.
func (y *durableWaiter) add(batch []*request, lastID int64) {
	y.mu.Lock()
	y.pending = append(y.pending, batch...)
	y.lastID = lastID
	y.mu.Unlock()
	poke(y.wake)
}

// waitTaken blocks until the waiter has taken every group handed over: the writer writes at
// most one group ahead of the fsync in flight.
func (y *durableWaiter) waitTaken() {
	for {
		y.mu.Lock()
		n := len(y.pending)
		y.mu.Unlock()
		if n == 0 {
			return
		}
		<-y.taken
	}
}

// run is the waiter goroutine. The writer starts it and stops it with close.
func (y *durableWaiter) run() {
	defer close(y.done)
	l := y.l
	var own []*request
	for {
		y.mu.Lock()
		own, y.pending = y.pending, own[:0]
		lastID, closed := y.lastID, y.closed
		y.mu.Unlock()
		if len(own) == 0 {
			if closed {
				return
			}
			<-y.wake
			continue
		}
		poke(y.taken)
		err := l.seg.WaitDurable(context.Background(), lastID)
		if err == nil {
			l.durable(own, lastID)
		} else {
			err = rawError("wait for raw fsync", err)
			l.stats.commitErrors.Add(1)
			l.failedOnce.Do(func() {
				l.cfg.Logger.Error("store: raw log fsync failed; every later append fails until the store is reopened", "err", err)
			})
		}
		l.answer(own, err)
		clear(own)
	}
}

// close answers every group handed over and stops run.
func (y *durableWaiter) close() {
	y.mu.Lock()
	y.closed = true
	y.mu.Unlock()
	poke(y.wake)
	<-y.done
}

// poke sends on a channel of capacity 1 without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
