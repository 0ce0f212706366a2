package store

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	// also registers the "sqlite" database/sql driver

	"github.com/otelbench/otelbench/internal/diskfull"
)

// Defaults for Config's zero values.
const (
	// DefaultQueueBytes bounds the payload bytes waiting for, or inside, a group commit.
	DefaultQueueBytes int64 = 32 << 20
	// DefaultQueueRequests bounds the requests waiting for, or inside, a group commit.
	DefaultQueueRequests = 8192
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
	// DefaultProjectShare is the projector's share of wall time while appends arrive, at
	// PriorityNormal.
	DefaultProjectShare = 0.5
	// DefaultReadConns is the size of the read-only pool behind ReadDB.
	DefaultReadConns = 4
	// DefaultProjectInterval is the shortest time between the starts of two projection
	// slices once the projector has caught up.
	DefaultProjectInterval = 100 * time.Millisecond
)

// Errors returned by Append and Close.
var (
	// ErrQueueFull means the group-commit queue is at its byte or request limit; retry later.
	ErrQueueFull = errors.New("store: queue full")
	// ErrClosed means Close has started; nothing more is accepted.
	ErrClosed = errors.New("store: closed")
	// ErrDiskFull means a write failed for lack of space (ENOSPC, EDQUOT or SQLITE_FULL); the
	// group was cut back off the raw log, nothing is corrupted, and later appends succeed once
	// space returns.
	ErrDiskFull = diskfull.ErrDiskFull
	// ErrSyncFailed means an fsync of the raw log failed (SyncFull). It is final: that group's
	// appends and every later one fail until the store is reopened (Failed; walsync.go).
	ErrSyncFailed = errors.New("store: fsync of the raw log failed")
)

// SyncMode is SQLite's synchronous setting for the write connection.
type SyncMode string

// Sync modes. Only SyncFull is durable: with it, Append returns nil only after the WAL holding the
// payload is fsynced (by walSyncer, beside the writer: walsync.go). SyncNormal may lose the last
// commits on power loss (not on a process crash); SyncOff may lose commits on an OS crash.
// Neither corrupts the database in WAL mode.
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
	// ProjectShare is the fraction of wall time the projector may spend projecting while
	// appends are arriving (it sleeps the rest after each slice), so ingest keeps priority on
	// a small machine; when no appends arrive it runs flat out. 0 means DefaultProjectShare;
	// 1 disables the throttle.
	ProjectShare float64
	// ProjectPriority is the CPU priority of the projector's thread; "" means DefaultPriority.
	// Below PriorityNormal, the kernel arbitrates between ingest and projection, and
	// ProjectShare defaults to 1 (no throttle).
	ProjectPriority Priority
	// ProjectInterval is the shortest time between the starts of two slices once the
	// projector has caught up: a trickle of small appends is projected in fewer, larger
	// slices, so telemetry.db commits less often (less work per record, and the read pool's
	// page caches, which SQLite drops whenever the database changed, survive between
	// commits). Projection lags by up to this much more. A backlog is projected without
	// waiting. 0 means DefaultProjectInterval; negative disables the wait.
	ProjectInterval time.Duration
	// ProjectDefer, below PriorityNormal, lets the projector wait while ingest saturates both
	// the writer and the machine, until the projection lag reaches this age (defer.go); 0 means
	// DefaultProjectDefer, negative never defers. ProjectDeferRecords, if positive, also ends
	// the wait at that many records of lag (ingestsrv sets half its 503 bound).
	ProjectDefer        time.Duration
	ProjectDeferRecords int64
	// ReadConns sizes the read-only pool; 0 means DefaultReadConns.
	ReadConns int
	// NoProjection disables the projector (raw storage only); used by benchmarks that measure
	// the write path alone. Raw payloads are then never pruned.
	NoProjection bool
	// RawRetention is how long a raw payload is kept after it was received once its projection
	// is durable; then its segment is deleted from the raw log, whole (see prune.go). 0 means
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
	if c.QueueBytes < 0 || c.QueueRequests < 0 || c.ProjectSlice < 0 || c.ReadConns < 0 || c.RawRetention < 0 || c.ProjectDeferRecords < 0 {
		return errors.New("store: config: negative limit")
	}
	if c.MaxDiskBytes < 0 || c.MaxDiskShare < 0 || c.MaxDiskShare > 1 {
		return fmt.Errorf("store: config: MaxDiskBytes %d negative or MaxDiskShare %v outside [0, 1]", c.MaxDiskBytes, c.MaxDiskShare)
	}
	if c.ProjectShare < 0 || c.ProjectShare > 1 {
		return fmt.Errorf("store: config: ProjectShare %v outside [0, 1]", c.ProjectShare)
	}
	return c.ProjectPriority.Validate()
}

func (c Config) withDefaults() Config {
	if c.Sync == "" {
		c.Sync = SyncFull
	}
	if c.QueueBytes == 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if c.QueueRequests == 0 {
		c.QueueRequests = DefaultQueueRequests
	}
	if c.ProjectSlice == 0 {
		c.ProjectSlice = DefaultProjectSlice
	}
	if c.ReadConns == 0 {
		c.ReadConns = DefaultReadConns
	}
	if c.ProjectPriority == "" {
		c.ProjectPriority = DefaultPriority
	}
	if c.ProjectShare == 0 {
		c.ProjectShare = DefaultProjectShare
		if c.ProjectPriority != PriorityNormal {
			c.ProjectShare = 1
		}
	}
	if c.ProjectInterval == 0 {
		c.ProjectInterval = DefaultProjectInterval
	}
	if c.ProjectDefer == 0 {
		c.ProjectDefer = DefaultProjectDefer
	}
	if c.RawRetention == 0 {
		c.RawRetention = DefaultRawRetention
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
