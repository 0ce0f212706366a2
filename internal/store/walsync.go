package store

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// walSyncer makes the writer's group commits durable off the writer's path (SyncFull). The
// writer commits each group at synchronous=NORMAL, so SQLite appends the WAL frames without an
// fsync; it hands the group to the syncer and commits the next group while the syncer fsyncs
// raw.db-wal, and only then are the first group's appends answered. The writer keeps at most one
// group ahead of the fsync in flight (waitTaken): the queue fills meanwhile, so groups stay as
// big as when each commit waited for its own fsync, and the writer's CPU work on one group
// overlaps the disk's flush of the one before. Under the mixed load of docs/benchmarks/serve.md
// that was ~6% more requests a second (median of 8 alternated rounds; faster in 6).
//
// Durability is the same as SQLite's synchronous=FULL: an append is answered nil only after an
// fsync of the WAL that began after its commit wrote its frames. SQLite's own checkpoints stay
// safe at NORMAL: it syncs the WAL before copying frames into raw.db and syncs raw.db before the
// WAL is reused. The fsync goes through a descriptor of the syncer's own; Linux's fsync flushes
// the file, whichever descriptor names it, and SQLite deletes raw.db-wal only when the last
// connection to raw.db closes, which the writer's does after the syncer has stopped.
//
// A row is visible to raw.db's readers from its commit, before it is durable: the projectors read
// raw rows only up to Stats.LastRawID, which the syncer advances after each fsync, so a power loss
// cannot leave projected rows whose raw row was never durable (their ids would be reused and the
// new rows skipped as projected).
//
// A failed fsync is final (the lesson of PostgreSQL's "fsyncgate"): Linux may have dropped the
// dirty pages it failed to write, so a later fsync that succeeds proves nothing about them. The
// syncer fails the groups it held, and the writer fails every later group without committing it,
// until the store is reopened (ErrSyncFailed; Store.Failed, which serve's /healthz reports). Those groups' rows were committed, so they may be in raw.db after
// a restart although their appends failed: the one case where an error does not mean "not stored".
type walSyncer struct {
	s   *Store
	wal *os.File // raw.db-wal

	// beforeSync, when set, runs before each fsync and its error replaces the fsync's: tests
	// hold a group between its commit and its fsync, or fail the fsync.
	beforeSync atomic.Pointer[func() error]

	mu      sync.Mutex
	pending []*request // committed, waiting for the next fsync
	lastID  int64      // the highest raw id committed
	closed  bool
	err     error // the first failed fsync; sticky

	wake  chan struct{} // capacity 1: groups were handed over, or close was called
	taken chan struct{} // capacity 1: the syncer took the pending groups
	done  chan struct{}
}

// newWALSyncer opens raw.db-wal, which exists once the writer's connection has put raw.db in WAL
// mode, and fsyncs it: after a process crash the WAL may hold committed frames that were never
// fsynced (their appends were not answered), and the projectors must not read them before they are.
func newWALSyncer(s *Store) (*walSyncer, error) {
	f, err := os.Open(s.rawPath + "-wal")
	if err != nil {
		return nil, fmt.Errorf("store: open raw WAL to sync it: %w", err)
	}
	y := &walSyncer{s: s, wal: f, wake: make(chan struct{}, 1), taken: make(chan struct{}, 1), done: make(chan struct{})}
	if err := y.sync(); err != nil {
		f.Close()
		return nil, err
	}
	return y, nil
}

// Failed returns the error of a failed fsync of raw.db-wal (wrapping ErrSyncFailed) once one
// has failed: from then on every append fails, and the store must be closed and reopened. It
// returns nil otherwise, and always below SyncFull.
func (s *Store) Failed() error {
	if s.syncer == nil {
		return nil
	}
	return s.syncer.failed()
}

// failed returns the sticky error of a failed fsync, if any.
func (y *walSyncer) failed() error {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.err
}

// add hands over a committed group whose highest raw id is lastID.
func (y *walSyncer) add(batch []*request, lastID int64) {
	y.mu.Lock()
	y.pending = append(y.pending, batch...)
	y.lastID = lastID
	y.mu.Unlock()
	poke(y.wake)
}

// waitTaken blocks until the syncer has taken every group handed over: the writer commits at
// most one group ahead of the fsync in flight.
func (y *walSyncer) waitTaken() {
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

// run is the syncer goroutine. The writer starts it and stops it with close.
func (y *walSyncer) run() {
	defer close(y.done)
	s := y.s
	var own []*request
	for {
		y.mu.Lock()
		own, y.pending = y.pending, own[:0]
		lastID, closed, err := y.lastID, y.closed, y.err
		y.mu.Unlock()
		if len(own) == 0 {
			if closed {
				return
			}
			<-y.wake
			continue
		}
		poke(y.taken)
		if err == nil {
			if err = y.sync(); err != nil {
				y.mu.Lock()
				y.err = err
				y.mu.Unlock()
				s.cfg.Logger.Error("store: raw WAL fsync failed; every later append fails until the store is reopened", "err", err)
			}
		}
		if err == nil {
			s.stats.syncs.Add(1)
			s.durable(own, lastID)
		} else {
			s.stats.commitErrors.Add(1)
		}
		s.answer(own, err)
		clear(own)
	}
}

// close answers every group handed over, stops run and closes the WAL descriptor.
func (y *walSyncer) close() error {
	y.mu.Lock()
	y.closed = true
	y.mu.Unlock()
	poke(y.wake)
	<-y.done
	return y.wal.Close()
}

// sync makes every frame written to raw.db-wal so far durable.
func (y *walSyncer) sync() error {
	var err error
	if hook := y.beforeSync.Load(); hook != nil {
		err = (*hook)()
	}
	if err == nil {
		err = y.wal.Sync()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSyncFailed, err)
	}
	return nil
}

// poke sends on a channel of capacity 1 without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
