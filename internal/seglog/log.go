package seglog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/signal"
)

// Defaults for Config's zero values.
const (
	// DefaultSegmentBytes is the size at which the writer starts a new segment. Deletion frees
	// whole segments, so this is also the granularity of retention; at 64 MiB one roll (one extra
	// fdatasync and a directory fsync) comes every ~5,000 requests of 12 KB (docs/design/seglog.md).
	DefaultSegmentBytes = 64 << 20
	// DefaultIndexBytes is the spacing in bytes of the sparse offset index: a reader seeks to
	// within this many bytes of any id, then reads headers forward.
	DefaultIndexBytes = 1 << 20
	// DefaultIndexRecords is the spacing in records of the sparse offset index, for logs of
	// small records.
	DefaultIndexRecords = 4096
	// DefaultSpares is how many deleted segments are kept as spare files for the next rolls
	// (spare.go). Two cover the rolls between two prunes: serve at 1,000-record requests
	// (scripts/bench-bulk.sh) rolled every 1.0-1.5 s, and its prune watcher looks every second.
	DefaultSpares = 2
)

// SyncMode says when the log fsyncs.
type SyncMode string

// Sync modes, with store.SyncMode's meanings. Only SyncFull is durable across power loss: an
// id is durable (Durable, WaitDurable) only after an fdatasync that began after its record was
// written. With SyncNormal an id is durable once written (it survives a process crash, not an
// OS crash or power loss); sealed segments are still fdatasynced at each roll. SyncOff never
// fsyncs.
const (
	SyncFull   SyncMode = "full"
	SyncNormal SyncMode = "normal"
	SyncOff    SyncMode = "off"
)

// Errors. Each is wrapped with the file and action.
var (
	// ErrDiskFull means a write failed for lack of space (ENOSPC or EDQUOT). The batch was cut
	// back off the segment, nothing is corrupted, and later writes succeed once space returns.
	ErrDiskFull = errors.New("seglog: disk full")
	// ErrSyncFailed means an fdatasync failed. It is final: Linux may have dropped the pages it
	// failed to write, so no later fsync proves them durable. Every later Write and every
	// WaitDurable past the durable mark fail with it until the log is reopened.
	ErrSyncFailed = errors.New("seglog: fsync failed")
	// ErrClosed means Close has been called.
	ErrClosed = errors.New("seglog: closed")
	// ErrCorrupt means a record inside a sealed segment (or before the tail of the last one,
	// when read) fails its checks; the error names the file and offset.
	ErrCorrupt = errors.New("seglog: corrupt segment")
)

// Config configures Open. Zero values fall back to the Default* constants.
type Config struct {
	// Dir holds the segment files; Open creates it.
	Dir string
	// SegmentBytes is the size at which a new segment starts; 0 means DefaultSegmentBytes.
	SegmentBytes int64
	// IndexBytes and IndexRecords space the sparse offset index; 0 means the defaults.
	IndexBytes   int64
	IndexRecords int
	// Spares bounds the deleted segments kept as spare files for the next rolls (spare.go);
	// 0 means DefaultSpares, negative keeps none.
	Spares int
	// CacheBytes is how much of the newest durable records stays in the page cache for
	// readers (cache.go); 0 means DefaultCacheBytes, negative keeps everything. Only SyncFull
	// releases pages: below it they may still be dirty.
	CacheBytes int64
	// Sync is the durability mode; "" means SyncFull.
	Sync SyncMode
	// Logger receives recovery's notes (a cut torn tail); nil discards them.
	Logger *slog.Logger

	// growing skips the zero-fill of new segments: BenchmarkAppend's "growing" rows measure
	// what the zero-fill buys.
	growing bool
	// zeroFill writes zeros through new segments instead of fallocating them:
	// BenchmarkAppend's "zero-filled" rows measure what fallocate buys.
	zeroFill bool
}

// Validate reports a Config that Open would refuse.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("seglog: config: Dir is empty")
	case c.SegmentBytes < 0 || c.IndexBytes < 0 || c.IndexRecords < 0:
		return errors.New("seglog: config: negative SegmentBytes, IndexBytes or IndexRecords")
	}
	switch c.Sync {
	case "", SyncFull, SyncNormal, SyncOff:
		return nil
	}
	return fmt.Errorf("seglog: config: unknown sync mode %q (want full, normal or off)", c.Sync)
}

func (c Config) withDefaults() Config {
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.IndexBytes == 0 {
		c.IndexBytes = DefaultIndexBytes
	}
	if c.IndexRecords == 0 {
		c.IndexRecords = DefaultIndexRecords
	}
	if c.Spares == 0 {
		c.Spares = DefaultSpares
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.Sync == "" {
		c.Sync = SyncFull
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Entry is one request to append. Payload is written as is and not retained after Write returns.
type Entry struct {
	Signal   signal.Signal
	Records  int
	Received int64 // Unix nanoseconds
	Payload  []byte
}

// Row is one stored record, as a Reader returns it.
type Row struct {
	ID       int64
	Signal   signal.Signal
	Records  int
	Received int64
	// Payload aliases the Reader's buffer: valid until the Reader's next Read or Close.
	Payload []byte
}

// Stats are the log's counters since Open, and its size on disk now.
type Stats struct {
	Requests, Records, Bytes int64 // appended (written), payload bytes
	Syncs                    int64 // fdatasyncs that advanced the durable mark
	DiskBytes                int64 // segment and spare files' sizes
	Segments                 int
	Spares                   int   // spare files kept for the next rolls (spare.go)
	First, Durable           int64 // lowest stored id (0 if none) and the durable mark
}

// indexEntry maps an id to the offset of its record's header.
type indexEntry struct {
	id  int64
	off int64
}

// segment is one file's metadata. first is fixed; the writer grows end, last and index under
// Log.mu, and readers copy them under it (index's prefix never changes once appended).
type segment struct {
	first        int64
	path         string
	end          int64 // bytes of whole records (the file's valid length)
	size         int64 // the file size: end, or more while allocated ahead
	zeroed       int64 // the writer's: below it the file's blocks are written (zeroAhead)
	recycled     bool  // a spare renamed into place: its blocks are written, not its cache
	released     int64 // below it the page cache was dropped (cache.go)
	last         int64 // last id in the segment; first-1 if empty
	lastReceived int64 // the last record's received time, for retention
	index        []indexEntry
	counts       Counts // what the segment holds, by signal
}

// Count is what a segment holds of one signal: requests, their records and payload bytes.
type Count struct{ Requests, Records, Bytes int64 }

// Counts are a segment's Count of each signal, indexed by the signal value (0 for a record whose
// signal byte is no signal, which a damaged writer could leave).
type Counts [signal.Traces + 1]Count

// add counts one record.
func (c *Counts) add(sig signal.Signal, records, bytes int64) {
	if sig > signal.Traces {
		sig = 0
	}
	c[sig].Requests++
	c[sig].Records += records
	c[sig].Bytes += bytes
}

// Log is an append-only log of records in segment files. One goroutine writes (Write, and the
// writer's side of DeleteThrough's roll); any number read through Readers.
type Log struct {
	cfg Config

	wmu      sync.Mutex // held by Write and by a roll; serializes the file's tail
	cur      *os.File   // the active (last) segment, open for writing
	iov      iovecs     // reused by Write
	hdrs     []byte     // reused by Write: headers of the batch
	idxBytes int64      // bytes since the last index entry of the active segment
	idxRecs  int

	mu     sync.Mutex
	segs   []*segment // ordered by first; the last is active
	spares []spare    // deleted segments kept for the next rolls (spare.go)
	next   int64      // the next id to assign
	err    error      // sticky: a failed fsync or an uncuttable write
	closed bool

	durable atomic.Int64 // highest id readers may see
	sy      *syncer      // SyncFull only

	stats struct{ requests, records, bytes, syncs atomic.Int64 }
}

// Open opens (creating if needed) the log in cfg.Dir, recovers it (recover.go) and, with
// SyncFull, starts its syncer. Close stops it.
func Open(cfg Config) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("seglog: create dir: %w", err)
	}
	l := &Log{cfg: cfg}
	if err := l.recover(); err != nil {
		return nil, err
	}
	if cfg.Sync == SyncFull {
		l.sy = newSyncer(l)
		go l.sy.run()
	}
	return l, nil
}

// Close waits for the syncer's last fsync, stops it and closes the files. Records written but
// not yet durable stay in the file; recovery keeps those that are whole.
func (l *Log) Close() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	if l.sy != nil {
		l.sy.close()
	}
	var err error
	if l.cfg.Sync != SyncOff && l.failed() == nil {
		err = fdatasync(l.cur)
	}
	if cerr := l.cur.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("seglog: close: %w", err)
	}
	return nil
}

// SetSyncHook sets (nil: clears) a function that runs before each fdatasync of SyncFull and
// whose error replaces the fsync's. It exists for tests outside the package that must fail an
// fsync: a real EIO cannot be produced on demand.
func (l *Log) SetSyncHook(hook func() error) {
	if l.sy == nil {
		return
	}
	if hook == nil {
		l.sy.beforeSync.Store(nil)
		return
	}
	l.sy.beforeSync.Store(&hook)
}

// Durable returns the durable high-water mark: every id at or below it is durable per Config.Sync
// and readable; Readers never return a row above it.
func (l *Log) Durable() int64 { return l.durable.Load() }

// Failed returns the sticky error (wrapping ErrSyncFailed) once an fsync has failed, else nil.
func (l *Log) Failed() error { return l.failed() }

func (l *Log) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Stats returns the counters and the size on disk.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	st := Stats{Segments: len(l.segs), Durable: l.durable.Load()}
	st.Spares, st.DiskBytes = l.spareBytes()
	for _, s := range l.segs {
		st.DiskBytes += s.size
		if st.First == 0 && s.last >= s.first {
			st.First = s.first
		}
	}
	l.mu.Unlock()
	st.Requests, st.Records = l.stats.requests.Load(), l.stats.records.Load()
	st.Bytes, st.Syncs = l.stats.bytes.Load(), l.stats.syncs.Load()
	return st
}
