package store

import (
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// SignalStats counts one signal's traffic since Open.
type SignalStats struct {
	// Requests and Records count appends committed durably (Append returned nil).
	Requests uint64
	Records  uint64
	// Bytes is the committed payload bytes (protobuf, as appended).
	Bytes uint64
	// RecordsProjected counts records projected into the relational tables since Open
	// (including backlog from before Open).
	RecordsProjected uint64
}

// Stats is a snapshot of the store's counters. Traffic counters start at zero at Open; LagRecords,
// LagSeconds, ProjectedRawID and LastRawID describe the database, backlog from before Open included.
type Stats struct {
	Logs, Metrics, Traces SignalStats

	// QueueRequests and QueueBytes are the appends queued or being committed now;
	// MaxQueueRequests and MaxQueueBytes are the limits beyond which Append returns ErrQueueFull.
	QueueRequests    int64
	QueueBytes       int64
	MaxQueueRequests int64
	MaxQueueBytes    int64

	// QueueFull counts appends rejected with ErrQueueFull.
	QueueFull uint64
	// Commits counts the writer's group writes to the raw log; Requests/Commits is the
	// group-commit factor.
	Commits uint64
	// Syncs counts the fsyncs of the raw log that made groups durable (SyncFull; one may cover
	// more than one group).
	Syncs uint64
	// CommitErrors counts writer transactions that failed, and fsyncs that failed (their
	// callers got the error).
	CommitErrors uint64

	// LagRecords is the records committed but not yet projected (including backlog from before
	// Open); LagSeconds is the age of the oldest unprojected request, 0 when caught up.
	LagRecords int64
	LagSeconds float64
	// ProjectedRawID is the projection high-water mark: raw rows with id <= it are projected
	// (the lowest of the projected databases' marks).
	ProjectedRawID int64
	// LastRawID is the id of the newest durable raw row (per Config.Sync): with SyncFull a
	// committed row counts from the fsync that made it durable, and projection reads up to it.
	LastRawID int64
	// ProjectionSlices counts projection transactions committed; ProjectionErrors counts failed
	// ones (retried).
	ProjectionSlices uint64
	ProjectionErrors uint64
	// ProjectionDeferring says the projector is waiting now because ingest saturates the
	// machine (project.Deferring); ProjectionDeferred is the time it waited so since Open.
	ProjectionDeferring bool
	ProjectionDeferred  time.Duration
	// WriterBusy is the time the writer spent committing and answering since Open (the rest it
	// waited for appends).
	WriterBusy time.Duration
	// ProjectionPages counts the projector connection's telemetry.db pages since Open.
	ProjectionPages PageStats

	// Durable are the totals since the data directory was created (totals.go), where the
	// traffic counters above start at Open.
	Durable Totals
	// Unprojectable counts the raw rows a projector could not project and passed by, kept in
	// its database with their payloads (internal/project); UnprojectableRecords their records.
	// Both count since the data directory was created.
	Unprojectable, UnprojectableRecords uint64
	// RetentionDeleted counts the rows the retention deleted since Open (retention.go).
	RetentionDeleted uint64
}

// PageStats are a connection's page-cache counters (sqlite3_db_status). They are exact, so
// they compare storage changes where the machine's timings are too noisy to.
type PageStats struct {
	// Written counts dirty pages written to the WAL, at commit or spilled; Spilled counts those
	// written in the middle of a transaction because the page cache overflowed (a page spilled
	// and changed again is written twice); Read counts cache misses, pages read from the file.
	Written, Spilled, Read uint64
}

// Signal returns the counters of sig (zero for an invalid signal).
func (s Stats) Signal(sig signal.Signal) SignalStats {
	return signal.Pick(sig, s.Logs, s.Metrics, s.Traces)
}

// counters are the live atomics behind Stats.
type counters struct {
	// Indexed by the signal value, not Signal.Index: a raw row read back from disk may hold
	// the invalid value 0, which must not panic the projector's accounting. The raw log counts
	// what it stored (rawlog.Stats).
	projected [signal.Traces + 1]atomic.Uint64

	slices, projectErrors atomic.Uint64

	lagRecords atomic.Int64
	// Per projected database, indexed by shard.index (the first shards of them): the
	// received_unix_nano of the oldest raw row its projector has not passed (0 if none), and
	// its projection high-water mark.
	shards         int
	oldestUnproj   [maxShards]atomic.Int64
	projectedRawID [maxShards]atomic.Int64

	offThreadCPU  atomic.Int64 // nanoseconds of thread CPU the projector's workers used (project.Worker)
	prefetches    atomic.Uint64
	deferredNanos atomic.Int64
	deferring     atomic.Bool

	pagesWritten, pagesSpilled, pagesRead atomic.Uint64

	// Rows no projector could project and their records, in the database (internal/project).
	unprojectable, unprojectableRecords atomic.Uint64
	// The projected records of the durable totals read at Open (totals.go), by signal value.
	baseProjected [signal.Traces + 1]uint64
}

// projection returns the lowest projection high-water mark and the oldest unprojected row's
// receive time over the shards (0 when none is behind).
func (c *counters) projection() (rawID, oldest int64) {
	for i := range c.shards {
		h := c.projectedRawID[i].Load()
		if i == 0 || h < rawID {
			rawID = h
		}
		if t := c.oldestUnproj[i].Load(); t > 0 && (oldest == 0 || t < oldest) {
			oldest = t
		}
	}
	return rawID, oldest
}

// Stats returns a snapshot of the counters: the raw log's (rawlog.Log.Stats) and the
// projectors'.
func (s *Store) Stats() Stats {
	c := &s.stats
	raw := s.raw.Stats()
	sig := func(i signal.Signal) SignalStats {
		n := raw.Stored[i]
		return SignalStats{Requests: n.Requests, Records: n.Records, Bytes: n.Bytes, RecordsProjected: c.projected[i].Load()}
	}
	st := Stats{
		Logs:             sig(signal.Logs),
		Metrics:          sig(signal.Metrics),
		Traces:           sig(signal.Traces),
		QueueRequests:    raw.QueueRequests,
		QueueBytes:       raw.QueueBytes,
		MaxQueueRequests: raw.MaxQueueRequests,
		MaxQueueBytes:    raw.MaxQueueBytes,
		QueueFull:        raw.QueueFull,
		Commits:          raw.Commits,
		Syncs:            raw.Syncs,
		CommitErrors:     raw.CommitErrors,
		LagRecords:       c.lagRecords.Load(),
		LastRawID:        raw.LastID,
		ProjectionSlices: c.slices.Load(),
		ProjectionErrors: c.projectErrors.Load(),

		ProjectionDeferring: c.deferring.Load(),
		ProjectionDeferred:  time.Duration(c.deferredNanos.Load()),
		WriterBusy:          raw.WriterBusy,
		ProjectionPages: PageStats{
			Written: c.pagesWritten.Load(), Spilled: c.pagesSpilled.Load(), Read: c.pagesRead.Load(),
		},
		Durable:              c.durable(raw.Total),
		Unprojectable:        c.unprojectable.Load(),
		UnprojectableRecords: c.unprojectableRecords.Load(),
		RetentionDeleted:     s.retain.deleted.Load(),
	}
	var oldest int64
	st.ProjectedRawID, oldest = c.projection()
	if st.ProjectedRawID < st.LastRawID {
		if oldest > 0 {
			st.LagSeconds = max(0, time.Since(time.Unix(0, oldest)).Seconds())
		}
	}
	return st
}
