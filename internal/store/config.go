package store

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	// also registers the "sqlite" database/sql driver

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
)

// Defaults for Config's zero values.
const (
	// DefaultQueueBytes bounds the payload bytes waiting for, or inside, a group commit.
	DefaultQueueBytes = rawlog.DefaultQueueBytes
	// DefaultQueueRequests bounds the requests waiting for, or inside, a group commit.
	DefaultQueueRequests = rawlog.DefaultQueueRequests
	// DefaultProjectSlice is how many raw rows one projection transaction takes at most.
	DefaultProjectSlice = 2048
	// RawDirName is the raw log's directory of segment files inside Config.Dir (the durable
	// write path; internal/seglog).
	RawDirName = "raw"
	// RawFileName is the raw database that earlier builds kept inside Config.Dir: Open refuses
	// a data directory that still has one.
	RawFileName = "raw.db"
	// FileName is the relational (projected) database inside Config.Dir.
	FileName = "telemetry.db"
	// DefaultReadConns is the size of the read-only pool behind ReadDB.
	DefaultReadConns = 4
	// DefaultProjectLag bounds the projection lag (LagSeconds) that the projector may build by
	// deferring while ingest saturates the machine (internal/project).
	DefaultProjectLag = project.DefaultMaxLag
)

// Errors returned by Append and Close.
var (
	// ErrQueueFull means the group-commit queue is at its byte or request limit; retry later.
	ErrQueueFull = rawlog.ErrQueueFull
	// ErrClosed means Close has started; nothing more is accepted.
	ErrClosed = rawlog.ErrClosed
	// ErrDiskFull means a write failed for lack of space (ENOSPC, EDQUOT or SQLITE_FULL); the
	// group was cut back off the raw log, nothing is corrupted, and later appends succeed once
	// space returns.
	ErrDiskFull = diskfull.ErrDiskFull
	// ErrSyncFailed means an fsync of the raw log failed (SyncFull). It is final: that group's
	// appends and every later one fail until the store is reopened (Failed; rawlog's walsync.go).
	ErrSyncFailed = rawlog.ErrSyncFailed
)

// SyncMode is when an appended group counts as durable (the raw log's seglog.SyncMode).
type SyncMode string

// Sync modes. Only SyncFull is durable: with it, Append returns nil only after the raw log's
// segment holding the payload is fdatasynced (by its syncer, beside the writer: rawlog's
// walsync.go). SyncNormal may lose the last groups on power loss (not on a process crash);
// SyncOff may lose groups on an OS crash. Neither corrupts the raw log or the databases.
const (
	SyncFull   SyncMode = "full"
	SyncNormal SyncMode = "normal"
	SyncOff    SyncMode = "off"
)

// Config configures Open. Zero values fall back to the Default* constants.
type Config struct {
	// Dir is the data directory; it is created if missing. Required.
	Dir string
	// Sync is the write connection's synchronous mode; "" means SyncFull.
	Sync SyncMode
	// QueueBytes bounds payload bytes queued or being committed; 0 means DefaultQueueBytes.
	QueueBytes int64
	// QueueRequests bounds requests queued or being committed; 0 means DefaultQueueRequests.
	QueueRequests int
	// ProjectSlice is the most raw rows one projection transaction takes; 0 means
	// DefaultProjectSlice.
	ProjectSlice int
	// ProjectLag bounds how far projection may fall behind while ingest saturates the machine:
	// the projector defers (internal/project: the scheduling policy) until the lag reaches this
	// age, then runs under load anyway at SCHED_IDLE. 0 means DefaultProjectLag; negative never
	// defers. ProjectLagRecords, if positive, also ends deferring at that many records of lag
	// (ingestsrv sets half its 503 bound).
	ProjectLag        time.Duration
	ProjectLagRecords int64
	// CPU is where the projection policy reads the machine's CPU times; nil means
	// project.Machine (/proc/stat). Clock times its windows; nil means the wall clock. Tests
	// inject both.
	CPU   project.CPUSource
	Clock project.Clock
	// ReadConns sizes the read-only pool; 0 means DefaultReadConns.
	ReadConns int
	// NoProjection disables the projector (raw storage only); used by benchmarks that measure
	// the write path alone. Raw payloads are then never pruned.
	NoProjection bool
	// RawRetention is how long a raw payload is kept after it was received once its projection
	// is durable; then its segment is deleted from the raw log, whole (rawlog's prune.go). 0 means
	// DefaultRawRetention.
	RawRetention time.Duration
	// KeepRaw disables pruning: the raw log keeps every payload and grows without bound.
	KeepRaw bool
	// rawSegmentBytes, when set, replaces the raw log's segment size: tests prune whole
	// segments without writing 64 MiB.
	rawSegmentBytes int64
	// Retention is how long projected data is kept (retention.go); 0 means DefaultRetention,
	// negative keeps it forever. MaxDiskBytes, if positive, and MaxDiskShare, if positive, a
	// fraction of the data directory's filesystem, bound the directory's used bytes: past the
	// lower bound the oldest data goes whatever its age.
	Retention    time.Duration
	MaxDiskBytes int64
	MaxDiskShare float64
	// TracesFile puts the trace tables in a database of their own, traces.db, with a projector
	// of its own beside telemetry.db's (shard.go): catch-up after a mixed load measured +15% on
	// 2 vCPUs for ~15 MB more peak RSS (c61b335, docs/benchmarks/store.md). It applies when the data directory gets its
	// first projected database; an existing one keeps its layout.
	TracesFile bool
	// Logger receives projection errors and lifecycle events; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("store: config: Dir is required")
	}
	switch c.Sync {
	case "", SyncFull, SyncNormal, SyncOff:
	default:
		return fmt.Errorf("store: config: unknown sync mode %q (want full, normal or off)", c.Sync)
	}
	if c.QueueBytes < 0 || c.QueueRequests < 0 || c.ProjectSlice < 0 || c.ReadConns < 0 || c.RawRetention < 0 || c.ProjectLagRecords < 0 {
		return errors.New("store: config: negative limit")
	}
	if c.MaxDiskBytes < 0 || c.MaxDiskShare < 0 || c.MaxDiskShare > 1 {
		return fmt.Errorf("store: config: MaxDiskBytes %d negative or MaxDiskShare %v outside [0, 1]", c.MaxDiskBytes, c.MaxDiskShare)
	}
	return nil
}

// WithDefaults returns c with every zero value replaced by its default (what Open uses).
func (c Config) WithDefaults() Config {
	c.Sync = cmp.Or(c.Sync, SyncFull)
	c.QueueBytes = cmp.Or(c.QueueBytes, DefaultQueueBytes)
	c.QueueRequests = cmp.Or(c.QueueRequests, DefaultQueueRequests)
	c.ProjectSlice = cmp.Or(c.ProjectSlice, DefaultProjectSlice)
	c.ReadConns = cmp.Or(c.ReadConns, DefaultReadConns)
	c.ProjectLag = cmp.Or(c.ProjectLag, DefaultProjectLag)
	c.RawRetention = cmp.Or(c.RawRetention, DefaultRawRetention)
	c.Retention = cmp.Or(c.Retention, DefaultRetention)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
