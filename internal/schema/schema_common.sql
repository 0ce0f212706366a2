-- otelbench store schema, part 1 of 3: the tables every projected database holds. Embedded by
-- schema.go and applied by Open. (SQLite, WAL.)
--
-- The databases in Config.Dir:
--   1. raw.db (raw.sql): the write path. One row per accepted OTLP Export*ServiceRequest, stored
--      exactly as received in protobuf encoding. The commit that earns the client its 200 writes
--      only there. ReadDB attaches it read-only as schema "raw" (SELECT ... FROM raw.raw).
--   2. telemetry.db (this file, schema.sql and schema_traces.sql): resources, scopes, logs,
--      metrics and their points, spans with their events and links and the packed trace_chunks,
--      filled later by a projector from raw, in bounded slices.
--   3. with --traces-file (store.Config.TracesFile), traces.db (this file and
--      schema_traces.sql) holds the trace tables instead, filled by a second projector of their
--      own. ReadDB attaches it as schema "traces"; the trace tables exist only there, so queries
--      name them unqualified (store's shard.go, "layouts").
--   Each projector takes the raw rows of its signals, and a slice's rows and its projection
--   high-water mark (projection_state.raw_id, past which no raw row of its signals is projected)
--   commit in ONE transaction, so a crash never loses or duplicates projected rows: after restart
--   projection resumes at raw_id + 1. Separate files mean separate write locks: the ingest writer
--   never waits for a projector, and the two projectors never wait for each other.

-- schema_version (created by Open in every database, one row): Open refuses a database of
-- another version than its own (schema.Version).

-- Conventions for the query side:
--   * Times are int64 nanoseconds since the Unix epoch (OTLP fixed64), column suffix _unix_nano.
--   * Trace and span IDs are lowercase hex TEXT (32 and 16 chars); an absent ID is NULL.
--   * Attribute maps are JSON objects in TEXT (use json_extract / ->> ); bytes values are base64
--     strings, non-finite doubles are the strings "NaN", "Infinity", "-Infinity".
--   * service is the resource's service.name (NULL when absent), copied onto logs/spans rows so the
--     per-service indexes need no join.
--   * Enum columns hold the OTLP integer values (severity_number, kind, status_code,
--     aggregation_temporality).

-- projection_state has exactly one row: the raw rows of this database's signals with id <= raw_id
-- are projected into it.
CREATE TABLE IF NOT EXISTS projection_state (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	raw_id INTEGER NOT NULL
);
INSERT OR IGNORE INTO projection_state(id, raw_id) VALUES (1, 0);

-- projected_totals counts, per signal, the records this database's projector
-- projected since the database was created, and the raw rows (unprojectable_requests) and their
-- records that it could not project, in the transaction of each slice.
CREATE TABLE IF NOT EXISTS projected_totals (
	signal                 INTEGER PRIMARY KEY,
	records                INTEGER NOT NULL DEFAULT 0,
	unprojectable_requests INTEGER NOT NULL DEFAULT 0,
	unprojectable_records  INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO projected_totals(signal) VALUES (0), (1), (2), (3);

-- unprojectable: the raw rows this database's projector could not decode (a
-- damaged row, or a payload that no decoder of this build accepts). The projector passes them by,
-- so projection goes on, and copies them here whole, payload included, in the slice's
-- transaction: the raw log deletes whole segments once projected, whatever they hold, and this
-- copy is kept (store's unprojectable.go) until --retention deletes the data they belong to, so
-- that what was acknowledged is never lost silently.
CREATE TABLE IF NOT EXISTS unprojectable (
	raw_id             INTEGER PRIMARY KEY,
	signal             INTEGER NOT NULL,
	records            INTEGER NOT NULL,
	received_unix_nano INTEGER NOT NULL,
	error              TEXT NOT NULL,
	payload            BLOB
);

-- retention_marks: every so often the retainer (store's retention.go) notes
-- the time and the highest rowid of each table then; the rows at or below the newest mark older
-- than --retention are deleted, in bounded steps. Columns of tables a database lacks hold 0.
CREATE TABLE IF NOT EXISTS retention_marks (
	at_unix_nano INTEGER PRIMARY KEY,
	log_id       INTEGER NOT NULL,
	span_id      INTEGER NOT NULL,
	point0_id    INTEGER NOT NULL,
	point1_id    INTEGER NOT NULL,
	point2_id    INTEGER NOT NULL,
	point3_id    INTEGER NOT NULL
);

-- resources are deduplicated by hash = FNV-128a over schema_url and the attributes with keys sorted.
CREATE TABLE IF NOT EXISTS resources (
	id           INTEGER PRIMARY KEY,
	hash         BLOB NOT NULL UNIQUE,
	service_name TEXT,
	schema_url   TEXT NOT NULL DEFAULT '',
	attributes   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS resources_service ON resources(service_name);

-- scopes (instrumentation scopes) are deduplicated the same way over name, version, schema_url
-- and attributes.
CREATE TABLE IF NOT EXISTS scopes (
	id         INTEGER PRIMARY KEY,
	hash       BLOB NOT NULL UNIQUE,
	name       TEXT NOT NULL DEFAULT '',
	version    TEXT NOT NULL DEFAULT '',
	schema_url TEXT NOT NULL DEFAULT '',
	attributes TEXT NOT NULL DEFAULT '{}'
);

-- Summaries, kept by the projector in the transaction of every projection slice (commit.go's
-- summarize), so they always describe exactly the projected rows.
--
-- service_counts: records per (service, signal) and the newest record time, for /services.
-- service is '' when service.name is absent; signal is 'logs', 'spans' (last seen = newest start
-- time) or 'metrics' (records = metric streams; last seen is not tracked and stays 0). Each
-- database counts its own signals: the query side reads telemetry.db's and traces.db's together.
CREATE TABLE IF NOT EXISTS service_counts (
	service             TEXT NOT NULL,
	signal              TEXT NOT NULL,
	records             INTEGER NOT NULL,
	last_seen_unix_nano INTEGER NOT NULL,
	PRIMARY KEY (service, signal)
) WITHOUT ROWID;

-- summary_state has one row: logs, spans and metrics rows with ids up to these are counted in
-- log_blocks and service_counts (a database's columns for the tables it lacks stay 0).
CREATE TABLE IF NOT EXISTS summary_state (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	log_id    INTEGER NOT NULL,
	span_id   INTEGER NOT NULL,
	metric_id INTEGER NOT NULL
);
INSERT OR IGNORE INTO summary_state(id, log_id, span_id, metric_id) VALUES (1, 0, 0, 0);
