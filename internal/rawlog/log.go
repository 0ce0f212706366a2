package rawlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Defaults for Config's zero values.
const (
	// DefaultQueueBytes bounds the payload bytes waiting for, or inside, a group write.
	DefaultQueueBytes int64 = 32 << 20
	// DefaultQueueRequests bounds the requests waiting for, or inside, a group write.
	DefaultQueueRequests = 8192
	// DefaultRetention is how long a projected raw payload is kept (prune.go).
	DefaultRetention = 10 * time.Minute
)

// Errors returned by Append. Their texts name the store, whose API returns them.
var (
	// ErrQueueFull means the group-commit queue is at its byte or request limit; retry later.
	ErrQueueFull = errors.New("store: queue full")
	// ErrClosed means Drain or Close has started; nothing more is accepted.
	ErrClosed = errors.New("store: closed")
	// ErrSyncFailed means an fsync of the raw log failed (SyncFull). It is final: that group's
	// appends and every later one fail until the log is reopened (Failed; walsync.go).
	ErrSyncFailed = errors.New("store: fsync of the raw log failed")
)

// Config configures Open. Zero values fall back to the Default* constants.
type Config struct {
	// Dir is the directory of the segment files; it is created if missing. Required.
	Dir string
	// Sync is when a group counts as durable; "" means seglog.SyncFull, with which Append
	// returns nil only after the fdatasync that covers its group.
	Sync seglog.SyncMode
	// SegmentBytes is the segment files' size; 0 means seglog's default.
	SegmentBytes int64
	// QueueRequests and QueueBytes bound the appends queued or being written.
	QueueRequests int
	QueueBytes    int64
	// Prune deletes whole segments once projected durably (SetProjected) and older than
	// Retention (prune.go); without it the log keeps every payload.
	Prune     bool
	Retention time.Duration
	// Bound is the data directory's size bound (nil: none).
	Bound Bound
	// OnDurable, if set, is called on the writer's side with each group once it is durable,
	// before its appends are answered: the store wakes its projectors with it.
	OnDurable func(Group)
	// Logger receives write and prune failures; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("rawlog: config: Dir is required")
	}
	if c.QueueRequests < 0 || c.QueueBytes < 0 || c.SegmentBytes < 0 || c.Retention < 0 {
		return errors.New("rawlog: config: negative limit")
	}
	return nil
}

// Bound is the size bound of the data directory the log lives in, which its owner keeps.
type Bound interface {
	// Over reports whether the directory is past its bound: Append then answers ErrDiskFull
	// without writing, so what frees space keeps the rest of the filesystem as headroom.
	Over() bool
	// Wrote counts n bytes the writer wrote (payloads and record headers) toward the bound.
	Wrote(n int64)
	// PruneNow reports whether projected segments are to go whatever their age.
	PruneNow() bool
}

// Group is a group of appends as OnDurable sees it.
type Group struct {
	LastID   int64 // the highest raw id of the group
	Records  int64 // the appenders' records, every signal's
	Received int64 // the first append's receive time, Unix nanoseconds
}

// Log is the raw log: the group-commit queue, its single writer, the durable waiter and the
// pruning of whole segments, on a seglog.Log. Its methods are safe for concurrent use.
type Log struct {
	cfg   Config
	seg   *seglog.Log
	q     queue
	stats counters
	prune pruneState

	syncer      *durableWaiter         // with SyncFull; the writer runs and stops it
	failedOnce  sync.Once              // logs a failed fsync once
	beforeWrite atomic.Pointer[func()] // tests: runs before each group write (HoldWriter)
	started     bool
	writerDone  chan struct{}
	drainOnce   sync.Once
	drainErr    error
}

// Open opens (creating if needed) the raw log in cfg.Dir, finishes a deletion of pruned
// segments a crash interrupted and reads the durable totals. Start starts its writer.
func Open(cfg Config) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Sync = cmp.Or(cfg.Sync, seglog.SyncFull)
	cfg.QueueRequests = cmp.Or(cfg.QueueRequests, DefaultQueueRequests)
	cfg.QueueBytes = cmp.Or(cfg.QueueBytes, DefaultQueueBytes)
	cfg.Retention = cmp.Or(cfg.Retention, DefaultRetention)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	seg, err := seglog.Open(seglog.Config{Dir: cfg.Dir, Sync: cfg.Sync, SegmentBytes: cfg.SegmentBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, rawError("open raw log", err)
	}
	l := &Log{cfg: cfg, seg: seg, writerDone: make(chan struct{})}
	l.q.init(cfg.QueueRequests, cfg.QueueBytes)
	if err := l.loadPruneState(); err != nil {
		seg.Close()
		return nil, err
	}
	l.loadTotals()
	l.stats.lastID.Store(seg.Durable())
	return l, nil
}

// Start starts the writer goroutine (and with SyncFull the durable waiter); Drain stops it.
func (l *Log) Start() {
	if l.cfg.Sync == seglog.SyncFull {
		l.syncer = newDurableWaiter(l)
	}
	l.started = true
	go l.runWriter()
}

// Drain refuses new appends (ErrClosed), writes everything queued, answers every append and
// stops the writer. If ctx ends first, the requests not yet in a group are failed with ErrClosed,
// the group in progress finishes, and Drain returns ctx.Err(). Calling it again returns the
// first call's result.
func (l *Log) Drain(ctx context.Context) error {
	l.drainOnce.Do(func() {
		l.q.close()
		if !l.started {
			l.q.abort()
			return
		}
		select {
		case <-l.writerDone:
		case <-ctx.Done():
			l.q.abort()
			<-l.writerDone
			l.drainErr = ctx.Err()
		}
	})
	return l.drainErr
}

// Close drains the log (Drain) and closes its files. Readers should be closed first.
func (l *Log) Close() error {
	l.Drain(context.Background())
	return l.seg.Close()
}

// Failed returns the error of a failed fsync of the raw log (wrapping ErrSyncFailed) once one
// has failed, or of a write that left the log's tail unknown: from then on every append fails,
// and the log must be closed and reopened. It returns nil otherwise.
func (l *Log) Failed() error {
	if err := l.seg.Failed(); err != nil {
		return rawError("raw log", err)
	}
	return nil
}

// Reader returns a reader of the durable rows filter takes (OpenReader).
func (l *Log) Reader(filter Filter) *Reader { return OpenReader(l.seg, filter) }

// Segments lists the segment files, oldest first (the last is the active one).
func (l *Log) Segments() []seglog.SegmentInfo { return l.seg.Segments() }

// ReleaseSpares deletes the spare segments kept for the next rolls (seglog.Log.ReleaseSpares):
// the store gives their room back while the data directory is over its size bound.
func (l *Log) ReleaseSpares() (freed int64, err error) { return l.seg.ReleaseSpares() }

// HoldWriter makes the writer wait, before its next group write, until release is called (once
// or more; the first call releases): tests fill the queue with it, or hold a group between the
// queue and the segment files.
func (l *Log) HoldWriter() (release func()) {
	ch := make(chan struct{})
	hook := func() { <-ch }
	l.beforeWrite.Store(&hook)
	var once sync.Once
	return func() {
		once.Do(func() {
			l.beforeWrite.Store(nil)
			close(ch)
		})
	}
}

// Scan calls fn with each durable row still in the log, in id order, until fn returns an
// error, which Scan returns. A row's payload is valid during the call only. It reads through a
// reader of its own, beside the writer and the projectors.
func (l *Log) Scan(fn func(Row) error) error {
	r := l.seg.NewReader()
	defer r.Close()
	var rows []seglog.Row
	for after := int64(0); ; {
		var err error
		rows, after, err = r.Read(after, seglog.Limits{Rows: 1024}, rows)
		if err != nil {
			return rawError("scan raw log", err)
		}
		if len(rows) == 0 {
			return nil
		}
		for _, sr := range rows {
			row := Row{ID: sr.ID, Signal: sr.Signal, Records: int64(sr.Records), Received: sr.Received, Payload: sr.Payload}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
}

// Backlog returns the records after id hwm of the signals takes wants and the receive time of
// the first row after hwm of any signal, 0 if none: from the segments' counts, and for the
// segment hwm falls inside, from its records after hwm.
func (l *Log) Backlog(hwm int64, takes func(signal.Signal) bool) (records, oldest int64, err error) {
	r := l.seg.NewReader()
	defer r.Close()
	var rows []seglog.Row
	for _, sg := range l.seg.Segments() {
		if sg.Last <= hwm || sg.Last < sg.First {
			continue
		}
		if sg.First > hwm { // wholly after the mark: its counts
			if oldest == 0 {
				if rows, _, err = r.Read(hwm, seglog.Limits{Rows: 1}, rows); err != nil {
					return 0, 0, rawError("read raw backlog", err)
				}
				if len(rows) > 0 {
					oldest = rows[0].Received
				}
			}
			for sig, c := range sg.Counts {
				if takes(signal.Signal(sig)) {
					records += c.Records
				}
			}
			continue
		}
		for after := hwm; after < sg.Last; {
			rows, after, err = r.Read(after, seglog.Limits{Rows: 4096}, rows)
			if err != nil {
				return 0, 0, rawError("read raw backlog", err)
			}
			if len(rows) == 0 {
				break
			}
			for _, row := range rows {
				if oldest == 0 {
					oldest = row.Received
				}
				if row.ID <= sg.Last && takes(row.Signal) {
					records += int64(row.Records)
				}
			}
		}
	}
	return records, oldest, nil
}

// rawError wraps err from the segment log: lack of space as diskfull.ErrDiskFull, a failed
// fsync (final) as ErrSyncFailed.
func rawError(action string, err error) error {
	if errors.Is(err, seglog.ErrSyncFailed) {
		return fmt.Errorf("store: %s: %w: %w", action, ErrSyncFailed, err)
	}
	return diskfull.Classify(action, err)
}
