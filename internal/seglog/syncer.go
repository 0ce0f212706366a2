package seglog

import (
	"os"
	"sync"
	"sync/atomic"
)

// syncer makes written records durable off the writer's path (SyncFull): the writer pokes it
// after each Write and goes on to write the next group while it fdatasyncs, so one fsync covers
// every group written while the last one ran (the overlap of rawlog's walsync.go;
// BenchmarkAppend measures it). The durable mark advances only to the last id written before
// the fsync began.
type syncer struct {
	l *Log
	// beforeSync, when set, runs before each fdatasync and its error replaces the fsync's:
	// tests fail an fsync with it, since a real EIO cannot be produced on demand.
	beforeSync atomic.Pointer[func() error]

	mu      sync.Mutex
	retired []retiredFile // sealed segments' descriptors, closed by the syncer between syncs
	ch      chan struct{} // closed and replaced whenever the mark advances or the log fails
	closed  bool
	wake    chan struct{} // capacity 1
	done    chan struct{}

	relFirst, relOff int64 // the run goroutine's: how far release dropped which segment (cache.go)
}

func newSyncer(l *Log) *syncer {
	return &syncer{l: l, ch: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// run is the syncer goroutine, started by Open and stopped by close.
func (y *syncer) run() {
	defer close(y.done)
	l := y.l
	for {
		y.mu.Lock()
		retired, closed := y.retired, y.closed
		y.retired = nil
		y.mu.Unlock()
		for _, r := range retired {
			y.releaseSealed(r)
			r.f.Close()
		}
		l.mu.Lock()
		f, target, failed := l.cur, l.next-1, l.err != nil
		seg := l.segs[len(l.segs)-1]
		end := seg.end
		l.mu.Unlock()
		if target > l.durable.Load() && !failed {
			if err := l.syncFile(f); err != nil {
				l.fail(err)
				continue
			}
			l.stats.syncs.Add(1)
			l.durable.Store(target)
			y.broadcast()
			y.release(f, seg, end)
			continue
		}
		if closed {
			y.broadcast()
			return
		}
		<-y.wake
	}
}

// changed returns a channel closed at the next change of the durable mark, and the sticky error
// or ErrClosed if waiting is pointless.
func (y *syncer) changed() (<-chan struct{}, error) {
	// Take the channel before reading the state: broadcast follows every change, so a change
	// after the read closes this channel.
	y.mu.Lock()
	ch, closed := y.ch, y.closed
	y.mu.Unlock()
	if err := y.l.failed(); err != nil {
		return nil, err
	}
	if closed {
		select {
		case <-y.done:
			return nil, ErrClosed
		default:
		}
	}
	return ch, nil
}

// broadcast wakes every WaitDurable.
func (y *syncer) broadcast() {
	y.mu.Lock()
	close(y.ch)
	y.ch = make(chan struct{})
	y.mu.Unlock()
}

// retire hands a sealed segment's descriptor to the syncer to close.
func (y *syncer) retire(f *os.File, seg *segment) {
	y.mu.Lock()
	y.retired = append(y.retired, retiredFile{f: f, seg: seg})
	y.mu.Unlock()
}

// close syncs what was written, stops run and closes the retired descriptors.
func (y *syncer) close() {
	y.mu.Lock()
	y.closed = true
	y.mu.Unlock()
	poke(y.wake)
	<-y.done
	for _, r := range y.retired {
		r.f.Close()
	}
	y.retired = nil
	y.broadcast()
}

// poke sends on a channel of capacity 1 without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
