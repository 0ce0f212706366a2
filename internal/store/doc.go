// Package store is otelbench's durable telemetry store: OTLP requests in embedded SQLite
// (modernc.org/sqlite, WAL), stored raw first and projected into relational tables later.
//
// The rooms. This package is the facade (Config, Open, Store: Append, Stats, Totals, Close,
// ReadDB, ProjectedNotify), and holds the raw log's write side (queue.go, writer.go, walsync.go,
// prune.go), the projectors (project.go, prefetch.go, commit.go, summarize.go, bulk.go,
// logtext.go, window.go, unprojectable.go, rowids.go), the shards, retention and the disk bound.
// Beside it:
//   - internal/project: the projectors' scheduling policy (idle, keeping up, deferring, catching
//     up), its CPU source, the SCHED_IDLE thread and the catch-up worker;
//   - internal/rawlog: the projectors' reader of durable raw rows (Reader, Row), no SQL in its API;
//   - internal/stage: payload → one slice's rows, no SQL (wire and pdata paths, resource cache,
//     deep values, record windows, log_text documents, the AnyValue JSON encoder);
//   - internal/schema: the SQL files, their version, Apply with the upgrades and summary
//     catch-ups, the block shifts;
//   - internal/tracechunk: the trace_chunks.packed encoder and decoder, shared with query;
//   - internal/diskfull: ErrDiskFull and the classification of failed SQLite writes.
//
// Config.Dir holds two databases: raw.db (the write path, raw.sql) and telemetry.db (the
// relational tables, schema_common.sql, schema.sql and schema_traces.sql, in internal/schema); with
// Config.TracesFile a third, traces.db, takes the trace tables (shard.go). Separate files have
// separate write locks, so the ingest writer never waits for a projector, and two projectors
// never wait for each other.
//
// Write path. Append puts {payload, done} on a queue bounded in requests and bytes
// (ErrQueueFull at once when full, ErrClosed once Close began). One writer goroutine owns the
// write connection to raw.db: it takes everything queued — it never waits for more work to
// arrive — inserts the raw protobuf payloads with multi-row INSERTs into the raw table in ONE
// transaction, commits and answers every waiting caller with the commit's result. Under load the
// queue fills while a commit is in flight, so one commit covers many requests (group commit, as in
// bbolt's DB.Batch); Stats.Commits counts the transactions. With Sync at SyncFull, the default,
// the answer waits for an fsync of raw.db-wal that a syncer goroutine runs beside the writer
// (walsync.go): the writer commits the next group while the last one is flushed, and projectors
// read only rows already durable. Stats.Syncs counts those fsyncs. A commit that fails for lack
// of space returns ErrDiskFull to that batch's callers; SQLite rolls the transaction back, so
// nothing is corrupted, and the next batch tries again.
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
// read-only pool on telemetry.db with raw.db attached as schema "raw" (and traces.db as
// "traces": the trace tables are named unqualified); ProjectedNotify signals
// after each projection slice (for live tails).
//
// A raw row no decoder accepts is passed by, recorded in its database's unprojectable table,
// counted (Stats.Unprojectable) and logged once, and kept in raw.db (unprojectable.go); a value
// nested past pdata's depth limit is stored as a JSON string below it (stage/deepvalue.go); a raw
// row of more than 65,536 records is staged a window at a time inside its slice's transaction
// (window.go, stage/recordwindow.go). Retention (retention.go): a retainer deletes projected rows older than
// Config.Retention, and the oldest first while the directory uses more than MaxDiskBytes or
// MaxDiskShare, in bounded steps between the projector's slices. Stats.Durable holds totals
// since the data directory was created, kept in the databases (totals.go).
//
// The schema is in internal/schema's schema_common.sql, schema.sql and schema_traces.sql
// (schema.Text returns them), with its conventions documented there.
package store
