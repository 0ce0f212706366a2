package query

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Tail defaults.
const (
	// DefaultTailBuffer is how many records a subscriber may fall behind
	// before it is dropped.
	DefaultTailBuffer = 1024
	// DefaultTailBatch is how many new records one poll reads.
	DefaultTailBatch = 2000
	// DefaultTailPoll is the fallback poll period when no projection signal
	// arrives (the signal is coalescing and best-effort).
	DefaultTailPoll = time.Second
	// DefaultMaxTails bounds concurrent live-tail subscribers.
	DefaultMaxTails = 64
)

// LogSource is where the tailer reads newly projected logs: LogsAfter
// returns up to limit records with ID > afterID in ID order; MaxLogID the
// highest ID stored (0 when none).
type LogSource interface {
	LogsAfter(ctx context.Context, afterID int64, limit int) ([]Log, error)
	MaxLogID(ctx context.Context) (int64, error)
}

// TailConfig configures a Tailer; zero fields take the Default* values.
type TailConfig struct {
	Buffer     int           // per-subscriber buffer in records
	Batch      int           // records read per poll
	Poll       time.Duration // fallback poll period
	MaxClients int           // subscriber limit (ErrTooManyTails beyond)
	// Notify subscribes to "new records projected" signals (store's
	// ProjectedNotify); nil means poll only.
	Notify func() (<-chan struct{}, func())
	Logger *slog.Logger
}

// Tailer fans newly projected logs out to live-tail subscribers. One
// goroutine (Run) reads new records once per projection signal and offers
// each to every subscriber whose filter matches, without blocking: a
// subscriber whose buffer is full is dropped (its channel closed, Dropped
// true). Ingest never waits on a subscriber, and a slow one costs at most
// its buffer.
type Tailer struct {
	src LogSource
	cfg TailConfig

	mu      sync.Mutex
	clients map[*TailSub]struct{}
	lastID  int64
	stopped bool
	ready   chan struct{} // closed once lastID is initialised
	wake    chan struct{}
}

// TailSub is one live-tail subscription. Receive from C until it is
// closed; then Dropped tells whether the subscriber fell behind.
type TailSub struct {
	C       <-chan Log
	ch      chan Log
	match   func(*Log) bool
	t       *Tailer
	dropped bool // guarded by t.mu
}

// NewTailer returns a Tailer reading from src; call Run to start it.
func NewTailer(src LogSource, cfg TailConfig) *Tailer {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultTailBuffer
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultTailBatch
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultTailPoll
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxTails
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Tailer{src: src, cfg: cfg, clients: map[*TailSub]struct{}{},
		ready: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// Run polls for new records until ctx is done, then closes every
// subscriber's channel. It returns ctx.Err() only if it could not start.
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
		logs, err := t.src.LogsAfter(ctx, after, t.cfg.Batch)
		if err != nil {
			return err
		}
		if len(logs) == 0 {
			return nil
		}
		t.publish(logs)
		if len(logs) < t.cfg.Batch {
			return nil
		}
	}
}

func (t *Tailer) publish(logs []Log) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range logs {
		l := &logs[i]
		if l.ID <= t.lastID {
			continue
		}
		t.lastID = l.ID
		for c := range t.clients {
			if !c.match(l) {
				continue
			}
			select {
			case c.ch <- *l:
			default:
				c.dropped = true
				close(c.ch)
				delete(t.clients, c)
			}
		}
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
	ch := make(chan Log, t.cfg.Buffer)
	s := &TailSub{C: ch, ch: ch, match: f.Matcher(), t: t}
	t.clients[s] = struct{}{}
	return s, nil
}

// Close unsubscribes; safe to call more than once and after a drop.
func (s *TailSub) Close() {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if _, ok := s.t.clients[s]; ok {
		delete(s.t.clients, s)
		close(s.ch)
	}
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
		close(c.ch)
		delete(t.clients, c)
	}
}

// Matcher returns a predicate equal to the SQL the /logs endpoint runs for
// f (the time range excluded: a tail has no end). q folds case as the
// log_text index does (unicode.ToLower per character, store.TextQuery);
// glob is SQLite GLOB.
func (f LogFilter) Matcher() func(*Log) bool {
	q := strings.ToLower(f.Q)
	var g *globPattern
	if f.Glob != "" {
		p := compileGlob(f.Glob)
		g = &p
	}
	traceHex := ""
	if f.TraceID != nil {
		traceHex = fmt.Sprintf("%x", f.TraceID)
	}
	return func(l *Log) bool {
		switch {
		case f.Service != "" && l.Service != f.Service,
			f.SeverityMin > 0 && l.SeverityNumber < f.SeverityMin,
			traceHex != "" && l.TraceID != traceHex,
			q != "" && !strings.Contains(strings.ToLower(l.Body), q),
			g != nil && !g.Match(l.Body):
			return false
		}
		return true
	}
}
