// Package store is otelbench's durable telemetry store: OTLP requests stored raw first, in an
// append-only segment log (internal/seglog), and projected later into relational tables in
// embedded SQLite (modernc.org/sqlite, WAL).
//
// The rooms. This package is the facade (Config, Open, Store: Append, Stats, Totals, Close,
// ReadDB, ProjectedNotify), composing the raw log (raw.go), and holds the shards and their
// projectors' start and stop (projectors.go), retention, the prune watcher and the disk bound.
// Beside it:
//   - internal/project: the projector's loop (read, stage and commit a slice; prefetch, record
//     windows, unprojectable rows) and its scheduling policy (idle, keeping up, deferring,
//     catching up), its CPU source, the SCHED_IDLE thread and the catch-up worker;
//   - internal/seglog: the raw log's segment files (format, group write, fsync, recovery,
//     deletion of whole segments);
//   - internal/rawlog: the raw log on seglog: the group-commit queue, the writer, the durable
//     waiter, pruning whole segments, the raw totals, and the projectors' Reader;
//   - internal/stage: payload → one slice's rows, no SQL (wire and pdata paths, resource cache,
//     deep values, record windows, log_text documents, the AnyValue JSON encoder);
//   - internal/schema: the SQL files, their version, Apply with the upgrades and summary
//     catch-ups, the block shifts;
//   - internal/tracechunk: the trace_chunks.packed encoder and decoder, shared with query;
//   - internal/diskfull: ErrDiskFull and the classification of failed writes.
//
// Config.Dir holds the raw log, raw/ (segment files, seglog's format), and telemetry.db (the
// relational tables, schema_common.sql, schema.sql and schema_traces.sql, in internal/schema);
// with Config.TracesFile a second database, traces.db, takes the trace tables (shard.go).
// Separate files have separate write locks, so the ingest writer never waits for a projector,
// and two projectors never wait for each other. A data directory of an earlier build, with a
// raw.db, is refused at Open with what to do.
//
// Write path (internal/rawlog). Append puts {payload, done} on a queue bounded in requests and bytes
// (ErrQueueFull at once when full, ErrClosed once Close began). One writer goroutine takes
// everything queued — it never waits for more work to arrive — and writes it to the raw log as
// one group, with one pwritev straight from the request buffers, then answers every waiting
// caller. Under load the queue fills while a group is in flight, so one write covers many
// requests (group commit, as in bbolt's DB.Batch); Stats.Commits counts the groups. With Sync at
// SyncFull, the default, the answer waits for the fdatasync that covers the group, which the
// raw log's syncer runs beside the writer (rawlog's walsync.go): the writer writes the next group while
// the last one is flushed, and projectors read only records already durable. Stats.Syncs counts
// those fsyncs. A write that fails for lack of space returns ErrDiskFull to that group's callers;
// the log cuts it back off, so nothing is corrupted, and the next group tries again. A failed
// fsync is final until the store is reopened (ErrSyncFailed, Failed).
//
// Projection. A projector goroutine per projected database reads raw rows above its
// high-water mark in slices of at most Config.ProjectSlice rows, decodes those of its signals
// with go.opentelemetry.io/collector/pdata outside any transaction, then inserts resources,
// scopes, logs (plus the FTS5 index of their bodies' trigrams), spans with events and links,
// metrics and their points (the spans into traces.db when there is one), updating
// projection_state in the same transaction. A crash therefore never loses or duplicates
// projected rows, and projection resumes after restart. The projector's thread runs under
// SCHED_IDLE and defers while ingest saturates the machine, up to Config.ProjectLag, so ingest
// keeps the CPU and projection lag (Stats.LagRecords, LagSeconds) absorbs bursts; a backlog is
// caught up at normal priority once ingest is idle (internal/project). Queries use ReadDB, a
// read-only pool on telemetry.db (with traces.db attached as "traces": the trace tables are
// named unqualified); ProjectedNotify signals
// after each projection slice (for live tails).
//
// A raw row no decoder accepts is passed by, recorded in its database's unprojectable table,
// counted (Stats.Unprojectable) and logged once, its payload copied there so it outlives its
// segment (project/unprojectable.go); a value
// nested past pdata's depth limit is stored as a JSON string below it (stage/deepvalue.go); a raw
// row of more than 65,536 records is staged a window at a time inside its slice's transaction
// (project/window.go, stage/recordwindow.go). Retention (retention.go): a retainer deletes projected rows older than
// Config.Retention, and the oldest first while the directory uses more than MaxDiskBytes or
// MaxDiskShare, in bounded steps between the projector's slices; the raw log's projected
// segments go whole once past Config.RawRetention (rawlog's prune.go; the store's prune watcher
// passes it the durable projection mark, prune.go). Stats.Durable holds totals since
// the data directory was created, kept in the segments' counts, a state file and the
// databases (totals.go).
//
// The schema is in internal/schema's schema_common.sql, schema.sql and schema_traces.sql
// (schema.Text returns them), with its conventions documented there.
package store
