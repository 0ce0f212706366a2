package rawlog

import (
	"sync"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/signal"
)

// Request states: a queued request is either taken by the writer (and then answered with the
// commit's result) or cancelled by its caller (and then skipped); the CAS decides which.
const (
	stateQueued int32 = iota
	stateTaken
	stateCancelled
)

// request is one Append waiting for a group commit.
type request struct {
	sig      signal.Signal
	payload  []byte
	records  int
	received int64 // unix nanoseconds at Append
	state    atomic.Int32
	done     chan error // buffered 1; receives exactly one result
}

// queue is the group-commit queue, bounded in requests and bytes. A request counts against the
// bounds from Append until its commit is answered, so the bounds cap memory held by the store.
type queue struct {
	mu       sync.Mutex
	items    []*request
	closed   bool
	maxReqs  int
	maxBytes int64
	wake     chan struct{} // capacity 1: "there is work or the queue closed"

	reqs  atomic.Int64 // queued + being committed
	bytes atomic.Int64
}

func (q *queue) init(maxReqs int, maxBytes int64) {
	q.maxReqs = maxReqs
	q.maxBytes = maxBytes
	q.wake = make(chan struct{}, 1)
}

// push enqueues r or returns ErrClosed / ErrQueueFull at once. A single request larger than
// maxBytes is accepted only when nothing else is queued, so it cannot be starved forever.
func (q *queue) push(r *request) error {
	n := int64(len(r.payload))
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	reqs, bytes := q.reqs.Load(), q.bytes.Load()
	if reqs+1 > int64(q.maxReqs) || (bytes+n > q.maxBytes && reqs > 0) {
		q.mu.Unlock()
		return ErrQueueFull
	}
	q.reqs.Add(1)
	q.bytes.Add(n)
	q.items = append(q.items, r)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// take blocks until requests are queued, the queue is closed or nudge is called, then moves every
// queued request into buf and returns it. It never waits for more work once there is some. An
// empty batch with ok true means a nudge (or a wake-up whose requests an earlier take already
// took): the writer's chance to do idle work. ok is false when the queue is closed and empty: the
// writer's signal to stop.
func (q *queue) take(buf []*request) (batch []*request, ok bool) {
	for waited := false; ; waited = true {
		q.mu.Lock()
		if len(q.items) > 0 {
			batch = append(buf, q.items...)
			clear(q.items)
			q.items = q.items[:0]
			q.mu.Unlock()
			return batch, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return buf, false
		}
		if waited {
			return buf, true
		}
		<-q.wake
	}
}

// idle reports whether nothing is queued (the writer may do idle work).
func (q *queue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// nudge wakes the writer even though nothing is queued; it never blocks.
func (q *queue) nudge() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// release returns a committed (or failed, or cancelled) request's share of the bounds.
func (q *queue) release(reqs int, bytes int64) {
	q.reqs.Add(-int64(reqs))
	q.bytes.Add(-bytes)
}

// close refuses further pushes and wakes the writer so it drains and stops.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// abort fails every request still queued (not yet taken by the writer) with ErrClosed.
func (q *queue) abort() {
	q.mu.Lock()
	items := q.items
	q.items = nil
	q.mu.Unlock()
	for _, r := range items {
		if r.state.CompareAndSwap(stateQueued, stateTaken) {
			r.done <- ErrClosed
		}
		q.release(1, int64(len(r.payload)))
	}
}
