package query

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Tail defaults.
const (
	// DefaultTailBuffer is how many records a subscriber may fall behind
	// before it is dropped.
	DefaultTailBuffer = 1024
	// DefaultTailSubscriberBytes is how many bytes of encoded records a
	// subscriber may hold (queued or being written) before it is dropped.
	DefaultTailSubscriberBytes = 8 << 20
	// DefaultTailTotalBytes bounds the encoded records held for all
	// subscribers together (each record counted once, however many hold
	// it); past it the subscribers holding the most are dropped first.
	DefaultTailTotalBytes = 64 << 20
	// DefaultTailBatch is how many new records one poll reads.
	DefaultTailBatch = 2000
	// DefaultTailBatchBytes bounds the bodies and attributes one poll reads:
	// 2,000 records of 3.5 MB would otherwise be 7 GB in one read.
	DefaultTailBatchBytes = 4 << 20
	// DefaultTailPoll is the fallback poll period when no projection signal
	// arrives (the signal is coalescing and best-effort).
	DefaultTailPoll = time.Second
	// DefaultMaxTails bounds concurrent live-tail subscribers.
	DefaultMaxTails = 64
)

// LogSource is where the tailer reads newly projected logs: LogsAfter
// returns up to limit records with ID > afterID in ID order, stopping after
// the record that brings their text past maxBytes (so at least one); MaxLogID
// the highest ID stored (0 when none).
type LogSource interface {
	LogsAfter(ctx context.Context, afterID int64, limit, maxBytes int) ([]Log, error)
	MaxLogID(ctx context.Context) (int64, error)
}

// TailConfig configures a Tailer; zero fields take the Default* values.
type TailConfig struct {
	Buffer          int           // per-subscriber limit in records
	SubscriberBytes int64         // per-subscriber limit in encoded bytes
	TotalBytes      int64         // limit over all subscribers in encoded bytes
	Batch           int           // records read per poll
	BatchBytes      int           // record text read per poll
	Poll            time.Duration // fallback poll period
	MaxClients      int           // subscriber limit (ErrTooManyTails beyond)
	// Notify subscribes to "new records projected" signals (store's
	// ProjectedNotify); nil means poll only.
	Notify func() (<-chan struct{}, func())
	Logger *slog.Logger
}

// TailEvent is one record encoded once as a Server-Sent Events frame
// ("id: N\nevent: log\ndata: <Log JSON>\n\n") and shared by every subscriber
// it matches. Data must not be modified.
type TailEvent struct {
	ID   int64
	Data []byte
	refs int // subscribers holding it; guarded by Tailer.mu
}

// Tailer fans newly projected logs out to live-tail subscribers. One
// goroutine (Run) reads new records once per projection signal, encodes
// each record that some subscriber wants once, and queues the shared frame
// to every subscriber whose filter matches, without blocking. Memory is
// bounded in bytes: a subscriber that holds more than SubscriberBytes (or
// Buffer records) is dropped, and when all of them together hold more than
// TotalBytes the ones holding the most are dropped first. Ingest never waits
// on a subscriber.
type Tailer struct {
	src LogSource
	cfg TailConfig

	mu      sync.Mutex
	clients map[*TailSub]struct{}
	total   int64 // bytes of the distinct events held by subscribers
	lastID  int64
	stopped bool
	ready   chan struct{} // closed once lastID is initialised
	wake    chan struct{}
}

// TailSub is one live-tail subscription. Wait on Ready, then Take the queued
// events, write them and Release them; when Take reports ended the
// subscription is over and Dropped tells whether it fell behind.
type TailSub struct {
	t     *Tailer
	match func(*Log) bool
	ready chan struct{} // capacity 1: events queued or the subscription ended

	// guarded by t.mu
	queue   []*TailEvent
	held    int64 // bytes of queue plus events taken but not yet released
	taken   int   // events taken but not yet released
	ended   bool
	dropped bool
}

// NewTailer returns a Tailer reading from src; call Run to start it.
func NewTailer(src LogSource, cfg TailConfig) *Tailer {
	cfg.Buffer = positiveOr(cfg.Buffer, DefaultTailBuffer)
	cfg.SubscriberBytes = positiveOr(cfg.SubscriberBytes, DefaultTailSubscriberBytes)
	cfg.TotalBytes = positiveOr(cfg.TotalBytes, DefaultTailTotalBytes)
	cfg.Batch = positiveOr(cfg.Batch, DefaultTailBatch)
	cfg.BatchBytes = positiveOr(cfg.BatchBytes, DefaultTailBatchBytes)
	cfg.Poll = positiveOr(cfg.Poll, DefaultTailPoll)
	cfg.MaxClients = positiveOr(cfg.MaxClients, DefaultMaxTails)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Tailer{src: src, cfg: cfg, clients: map[*TailSub]struct{}{},
		ready: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// positiveOr returns v, or def when v is not positive.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Run polls for new records until ctx is done, then ends every
// subscription. It returns an error only if it could not start.
func (t *Tailer) Run(ctx context.Context) error {
	var notify <-chan struct{}
	if t.cfg.Notify != nil {
		ch, cancel := t.cfg.Notify()
		defer cancel()
		notify = ch
	}
	defer t.closeAll()
	id, err := t.src.MaxLogID(ctx)
	if err != nil {
		if ctx.Err() != nil { // stopped before it started: not a failure
			return nil
		}
		return fmt.Errorf("tail: read last log id: %w", err)
	}
	t.mu.Lock()
	t.lastID = id
	t.mu.Unlock()
	close(t.ready)
	tick := time.NewTicker(t.cfg.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-notify:
			if !ok {
				notify = nil // the store closed; keep polling until ctx ends
			}
		case <-t.wake:
		case <-tick.C:
		}
		if err := t.poll(ctx); err != nil && ctx.Err() == nil {
			t.cfg.Logger.Warn("live tail poll", "err", err)
		}
	}
}

// poll reads everything new in batches and publishes it. With no
// subscribers it only advances lastID, which costs one indexed lookup.
func (t *Tailer) poll(ctx context.Context) error {
	for {
		t.mu.Lock()
		after, n := t.lastID, len(t.clients)
		t.mu.Unlock()
		if n == 0 {
			id, err := t.src.MaxLogID(ctx)
			if err != nil {
				return err
			}
			t.mu.Lock()
			t.lastID = max(t.lastID, id)
			t.mu.Unlock()
			return nil
		}
		logs, err := t.src.LogsAfter(ctx, after, t.cfg.Batch, t.cfg.BatchBytes)
		if err != nil {
			return err
		}
		if len(logs) == 0 {
			return nil
		}
		// A batch short of Batch may have stopped at BatchBytes: read
		// until a read comes back empty.
		for i := range logs {
			t.publish(&logs[i])
			logs[i] = Log{} // let a big body go once its frame is queued
		}
	}
}

// publish encodes l once if some subscriber's filter matches it and queues
// the frame to each of them. Matching and encoding run outside the lock, so
// subscribers taking events never wait on a big record's encoding.
func (t *Tailer) publish(l *Log) {
	t.mu.Lock()
	if l.ID <= t.lastID {
		t.mu.Unlock()
		return
	}
	t.lastID = l.ID
	subs := make([]*TailSub, 0, len(t.clients))
	for c := range t.clients {
		subs = append(subs, c)
	}
	t.mu.Unlock()
	var want []*TailSub
	for _, c := range subs {
		if c.match(l) {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return
	}
	ev, err := encodeEvent(l)
	if err != nil {
		t.cfg.Logger.Warn("live tail: encode log", "id", l.ID, "err", err)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	size := int64(len(ev.Data))
	for _, c := range want {
		if c.ended {
			continue
		}
		if len(c.queue)+c.taken >= t.cfg.Buffer || c.held+size > t.cfg.SubscriberBytes {
			t.drop(c)
			continue
		}
		c.queue = append(c.queue, ev)
		c.held += size
		if ev.refs == 0 {
			t.total += size
		}
		ev.refs++
		c.signal()
	}
	t.shed()
}

// encodeEvent builds l's SSE frame. JSON escapes every newline, so the data
// is one line.
func encodeEvent(l *Log) (*TailEvent, error) {
	data, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(data)+48)
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, l.ID, 10)
	b = append(b, "\nevent: log\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return &TailEvent{ID: l.ID, Data: b}, nil
}

// shed drops the subscribers holding the most bytes until the events held
// for all of them fit TotalBytes. A subscriber that holds the most is the one
// furthest behind. t.mu is held.
func (t *Tailer) shed() {
	for t.total > t.cfg.TotalBytes {
		var worst *TailSub
		for c := range t.clients {
			if worst == nil || c.held > worst.held {
				worst = c
			}
		}
		if worst == nil || worst.held == 0 {
			return
		}
		t.drop(worst)
	}
}

// drop ends c for falling behind and frees its queued events. t.mu is held.
func (t *Tailer) drop(c *TailSub) {
	c.dropped = true
	t.end(c)
}

// end ends c's subscription: its queued events are released, and the events
// it has taken are released by Release. t.mu is held.
func (t *Tailer) end(c *TailSub) {
	if c.ended {
		return
	}
	c.ended = true
	delete(t.clients, c)
	for i, ev := range c.queue {
		t.unref(c, ev)
		c.queue[i] = nil
	}
	c.queue = nil
	c.signal()
}

// unref drops c's hold on ev. t.mu is held.
func (t *Tailer) unref(c *TailSub, ev *TailEvent) {
	size := int64(len(ev.Data))
	c.held -= size
	ev.refs--
	if ev.refs == 0 {
		t.total -= size
	}
}

// Subscribe registers a subscriber for records projected from now on that
// match f. It waits until Run has initialised (or ctx ends).
func (t *Tailer) Subscribe(ctx context.Context, f LogFilter) (*TailSub, error) {
	select {
	case <-t.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return nil, ErrTailStopped
	}
	if len(t.clients) >= t.cfg.MaxClients {
		return nil, ErrTooManyTails
	}
	s := &TailSub{t: t, match: f.Matcher(), ready: make(chan struct{}, 1)}
	t.clients[s] = struct{}{}
	return s, nil
}

func (s *TailSub) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready receives when events are queued or the subscription has ended.
func (s *TailSub) Ready() <-chan struct{} { return s.ready }

// Take moves the queued events into dst, up to maxBytes of them (at least
// one), and returns it; the caller holds them (they count against the
// subscriber's bytes) until it passes them to Release. ended is true once
// the subscription is over and nothing is queued.
func (s *TailSub) Take(dst []*TailEvent, maxBytes int) (events []*TailEvent, ended bool) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	n, size := 0, 0
	for n < len(s.queue) && (n == 0 || size+len(s.queue[n].Data) <= maxBytes) {
		size += len(s.queue[n].Data)
		dst = append(dst, s.queue[n])
		s.queue[n] = nil
		n++
	}
	s.queue = s.queue[n:]
	s.taken += n
	if len(s.queue) > 0 {
		s.signal()
	}
	return dst, s.ended && len(s.queue) == 0
}

// Release gives back events that Take returned, once they are written.
func (s *TailSub) Release(events []*TailEvent) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	for _, ev := range events {
		s.t.unref(s, ev)
	}
	s.taken -= len(events)
}

// Close unsubscribes; safe to call more than once and after a drop. Events
// taken and not released stay counted until Release.
func (s *TailSub) Close() {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.t.end(s)
}

// Dropped reports whether the tailer dropped s for falling behind.
func (s *TailSub) Dropped() bool {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	return s.dropped
}

// Subscribers returns the current subscriber count.
func (t *Tailer) Subscribers() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients)
}

// HeldBytes returns the bytes of the distinct encoded records that
// subscribers hold (queued or being written).
func (t *Tailer) HeldBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Wake asks Run to poll now (tests and callers that know data landed).
func (t *Tailer) Wake() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *Tailer) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	select {
	case <-t.ready:
	default:
		close(t.ready) // Run failed before initialising; release waiters
	}
	for c := range t.clients {
		t.end(c)
	}
}
