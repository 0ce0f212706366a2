-- otelbench store schema: the relational (projected) database, telemetry.db in Config.Dir.
-- Embedded by schema.go and applied by Open. (SQLite, WAL.)
--
-- Two databases, two layers:
--   1. raw.db (raw.sql): the write path. One row per accepted OTLP Export*ServiceRequest, stored
--      exactly as received in protobuf encoding. The commit that earns the client its 200 writes
--      only there. ReadDB attaches it read-only as schema "raw" (SELECT ... FROM raw.raw).
--   2. telemetry.db (this file): relational tables (resources, scopes, logs, spans, metrics,
--      *_points) filled later by the projector from raw, in bounded slices. Each slice's rows and
--      the projection high-water mark (projection_state.raw_id) commit in ONE transaction, so a
--      crash never loses or duplicates projected rows: after restart projection resumes at
--      raw_id + 1. Separate files mean separate write locks: the ingest writer never waits for
--      the projector.

-- schema_version (created by Open in both databases, one row) lets later releases migrate; Open
-- refuses a newer version than it knows.

-- Conventions for the query side:
--   * Times are int64 nanoseconds since the Unix epoch (OTLP fixed64), column suffix _unix_nano.
--   * Trace and span IDs are lowercase hex TEXT (32 and 16 chars); an absent ID is NULL.
--   * Attribute maps are JSON objects in TEXT (use json_extract / ->> ); bytes values are base64
--     strings, non-finite doubles are the strings "NaN", "Infinity", "-Infinity".
--   * service is the resource's service.name (NULL when absent), copied onto logs/spans rows so the
--     per-service indexes need no join.
--   * Enum columns hold the OTLP integer values (severity_number, kind, status_code,
--     aggregation_temporality).

-- projection_state has exactly one row: raw rows with id <= raw_id are projected.
CREATE TABLE IF NOT EXISTS projection_state (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	raw_id INTEGER NOT NULL
);
INSERT OR IGNORE INTO projection_state(id, raw_id) VALUES (1, 0);

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

-- logs: one row per LogRecord. body is the string body, or the JSON of a non-string body.
CREATE TABLE IF NOT EXISTS logs (
	id                      INTEGER PRIMARY KEY,
	raw_id                  INTEGER NOT NULL,
	resource_id             INTEGER NOT NULL REFERENCES resources(id),
	scope_id                INTEGER NOT NULL REFERENCES scopes(id),
	service                 TEXT,
	time_unix_nano          INTEGER NOT NULL,
	observed_time_unix_nano INTEGER NOT NULL,
	severity_number         INTEGER NOT NULL,
	severity_text           TEXT NOT NULL DEFAULT '',
	body                    TEXT NOT NULL DEFAULT '',
	attributes              TEXT NOT NULL DEFAULT '{}',
	trace_id                TEXT,
	span_id                 TEXT,
	flags                   INTEGER NOT NULL DEFAULT 0,
	event_name              TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS logs_time ON logs(time_unix_nano);
CREATE INDEX IF NOT EXISTS logs_service_time ON logs(service, time_unix_nano);
-- logs_trace_block (schema version 5) finds a trace's logs. It is keyed by the log's block first
-- (id >> 12, the blocks of log_blocks below), so a projection slice writes its entries into the
-- newest block's small range of the index instead of one random page per traced log across the
-- whole index: with random trace ids a plain index on trace_id halved projection at 400,000
-- logs and cut it to a third at 1.6M (docs/benchmarks/store.md). A lookup seeks once per block:
--   SELECT l.* FROM logs l WHERE (l.id >> 12) IN (SELECT block FROM log_blocks) AND l.trace_id = ?
-- (bounded further by log_blocks' times when the query has a time range).
CREATE INDEX IF NOT EXISTS logs_trace_block ON logs(id >> 12, trace_id) WHERE trace_id IS NOT NULL;

-- log_text indexes log bodies for substring search, one document per group of 16 consecutive
-- log ids: rowid = logs.id >> 4 (store.LogTextShift). A document is the group's distinct
-- trigrams (3-character windows of each body, case-folded), each one token of the ascii
-- tokenizer: the hex of its UTF-8 bytes, "k f" = 6b2066 (schema version 7, store's
-- textgrams.go; before, the trigram tokenizer took the group's bodies and did every window once
-- per occurrence). A match names a group whose rows are candidates, which the query then checks
-- against the exact pattern:
--   SELECT l.* FROM log_text CROSS JOIN logs l
--     ON l.id BETWEEN log_text.rowid << 4 AND (log_text.rowid << 4) + 15
--   WHERE log_text MATCH '"6e6565" AND "656564" AND "65646c" AND "646c65"' AND l.body LIKE '%needle%'
-- Log messages repeat their words, so a group holds each trigram once where a per-row index
-- held it up to 16 times: index writes and segment merges fall with it (docs/benchmarks/
-- store.md). detail=none: MATCH takes single tokens (AND them), never phrases. Contentless
-- (the text lives in logs.body) with contentless_delete=1, so the projector can REPLACE the
-- document of a group that a later slice completes.
CREATE VIRTUAL TABLE IF NOT EXISTS log_text USING fts5(
	body, content='', contentless_delete=1, tokenize='ascii', detail=none
);

-- spans: one row per Span. parent_span_id IS NULL marks a root span. duration_nano = end - start.
CREATE TABLE IF NOT EXISTS spans (
	id                   INTEGER PRIMARY KEY,
	raw_id               INTEGER NOT NULL,
	resource_id          INTEGER NOT NULL REFERENCES resources(id),
	scope_id             INTEGER NOT NULL REFERENCES scopes(id),
	service              TEXT,
	trace_id             TEXT NOT NULL,
	span_id              TEXT NOT NULL,
	parent_span_id       TEXT,
	trace_state          TEXT NOT NULL DEFAULT '',
	name                 TEXT NOT NULL,
	kind                 INTEGER NOT NULL,
	start_time_unix_nano INTEGER NOT NULL,
	end_time_unix_nano   INTEGER NOT NULL,
	duration_nano        INTEGER NOT NULL,
	status_code          INTEGER NOT NULL,
	status_message       TEXT NOT NULL DEFAULT '',
	attributes           TEXT NOT NULL DEFAULT '{}',
	flags                INTEGER NOT NULL DEFAULT 0,
	dropped_attributes   INTEGER NOT NULL DEFAULT 0,
	dropped_events       INTEGER NOT NULL DEFAULT 0,
	dropped_links        INTEGER NOT NULL DEFAULT 0
);
-- spans_trace_block (schema version 5) finds a trace's spans, keyed by the span's block of
-- 4,096 ids first (id >> 12, store.SpanBlockShift) for the reason logs_trace_block is: a plain
-- index on trace_id took each slice's traces at random pages of the whole index (projection of
-- 10-span traces with random ids fell from ~110k to 52k spans/s at 1.6M spans). A lookup seeks
-- once per block that can hold the trace's spans: the blocks of its trace_chunks' id ranges
-- (below), and in a database upgraded from version 1 every block of the spans older than
-- trace_chunks:
--   SELECT * FROM spans WHERE (id >> 12) IN (5, 6) AND trace_id = ?
CREATE INDEX IF NOT EXISTS spans_trace_block ON spans(id >> 12, trace_id);
-- spans_root_service_start (schema version 6) lists a service's traces by their root spans, the
-- only spans a trace search filters by service (internal/query's Traces). It replaced an index
-- of every span by (service, start), which cost the projector a third of a span's time on the
-- load's traces of 5 spans, whose starts land anywhere in it (docs/benchmarks/store.md).
CREATE INDEX IF NOT EXISTS spans_root_service_start ON spans(service, start_time_unix_nano) WHERE parent_span_id IS NULL;
CREATE INDEX IF NOT EXISTS spans_root_start ON spans(start_time_unix_nano) WHERE parent_span_id IS NULL;

-- span_events and span_links reference their span by spans.id (not by the OTLP span id).
CREATE TABLE IF NOT EXISTS span_events (
	span_row_id        INTEGER NOT NULL REFERENCES spans(id),
	time_unix_nano     INTEGER NOT NULL,
	name               TEXT NOT NULL,
	attributes         TEXT NOT NULL DEFAULT '{}',
	dropped_attributes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS span_events_span ON span_events(span_row_id);

CREATE TABLE IF NOT EXISTS span_links (
	span_row_id        INTEGER NOT NULL REFERENCES spans(id),
	trace_id           TEXT NOT NULL,
	span_id            TEXT NOT NULL,
	trace_state        TEXT NOT NULL DEFAULT '',
	attributes         TEXT NOT NULL DEFAULT '{}',
	flags              INTEGER NOT NULL DEFAULT 0,
	dropped_attributes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS span_links_span ON span_links(span_row_id);
CREATE INDEX IF NOT EXISTS span_links_trace ON span_links(trace_id);

-- metrics: one row per distinct metric stream identity (resource, scope, name, description, unit,
-- type, temporality, monotonic), deduplicated by hash like resources.
-- type: 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary'.
-- temporality: 0 unspecified, 1 delta, 2 cumulative (sum/histogram/exp histogram only).
CREATE TABLE IF NOT EXISTS metrics (
	id          INTEGER PRIMARY KEY,
	hash        BLOB NOT NULL UNIQUE,
	resource_id INTEGER NOT NULL REFERENCES resources(id),
	scope_id    INTEGER NOT NULL REFERENCES scopes(id),
	service     TEXT,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	unit        TEXT NOT NULL DEFAULT '',
	type        TEXT NOT NULL,
	temporality INTEGER NOT NULL DEFAULT 0,
	monotonic   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS metrics_name ON metrics(name);
CREATE INDEX IF NOT EXISTS metrics_service_name ON metrics(service, name);

-- number_points holds gauge and sum data points (metrics.type tells which). Exactly one of
-- value_int / value_double is set, as in OTLP's NumberDataPoint oneof.
CREATE TABLE IF NOT EXISTS number_points (
	metric_id            INTEGER NOT NULL REFERENCES metrics(id),
	raw_id               INTEGER NOT NULL,
	time_unix_nano       INTEGER NOT NULL,
	start_time_unix_nano INTEGER NOT NULL,
	attributes           TEXT NOT NULL DEFAULT '{}',
	value_int            INTEGER,
	value_double         REAL,
	flags                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS number_points_metric_time ON number_points(metric_id, time_unix_nano);

-- histogram_points: explicit-bucket histograms. bucket_counts and explicit_bounds are JSON arrays
-- (len(bucket_counts) = len(explicit_bounds) + 1 when set). sum/min/max are NULL when absent.
CREATE TABLE IF NOT EXISTS histogram_points (
	metric_id            INTEGER NOT NULL REFERENCES metrics(id),
	raw_id               INTEGER NOT NULL,
	time_unix_nano       INTEGER NOT NULL,
	start_time_unix_nano INTEGER NOT NULL,
	attributes           TEXT NOT NULL DEFAULT '{}',
	count                INTEGER NOT NULL,
	sum                  REAL,
	min                  REAL,
	max                  REAL,
	bucket_counts        TEXT NOT NULL DEFAULT '[]',
	explicit_bounds      TEXT NOT NULL DEFAULT '[]',
	flags                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS histogram_points_metric_time ON histogram_points(metric_id, time_unix_nano);

-- exp_histogram_points: base-2 exponential histograms. positive_buckets / negative_buckets are
-- JSON arrays of counts starting at bucket index positive_offset / negative_offset.
CREATE TABLE IF NOT EXISTS exp_histogram_points (
	metric_id            INTEGER NOT NULL REFERENCES metrics(id),
	raw_id               INTEGER NOT NULL,
	time_unix_nano       INTEGER NOT NULL,
	start_time_unix_nano INTEGER NOT NULL,
	attributes           TEXT NOT NULL DEFAULT '{}',
	count                INTEGER NOT NULL,
	sum                  REAL,
	min                  REAL,
	max                  REAL,
	scale                INTEGER NOT NULL,
	zero_count           INTEGER NOT NULL,
	zero_threshold       REAL NOT NULL DEFAULT 0,
	positive_offset      INTEGER NOT NULL DEFAULT 0,
	positive_buckets     TEXT NOT NULL DEFAULT '[]',
	negative_offset      INTEGER NOT NULL DEFAULT 0,
	negative_buckets     TEXT NOT NULL DEFAULT '[]',
	flags                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS exp_histogram_points_metric_time ON exp_histogram_points(metric_id, time_unix_nano);

-- summary_points: quantiles is a JSON array of {"q": quantile, "v": value}.
CREATE TABLE IF NOT EXISTS summary_points (
	metric_id            INTEGER NOT NULL REFERENCES metrics(id),
	raw_id               INTEGER NOT NULL,
	time_unix_nano       INTEGER NOT NULL,
	start_time_unix_nano INTEGER NOT NULL,
	attributes           TEXT NOT NULL DEFAULT '{}',
	count                INTEGER NOT NULL,
	sum                  REAL NOT NULL,
	quantiles            TEXT NOT NULL DEFAULT '[]',
	flags                INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS summary_points_metric_time ON summary_points(metric_id, time_unix_nano);

-- trace_chunks (schema version 2) holds every trace a second time, packed for the trace view:
-- one row per (projection slice, trace), written by the projector in the same transaction as the
-- spans rows (so a rolled-back slice leaves neither, and a re-projected slice writes each chunk
-- once). first_span_id / last_span_id are the spans.id range of the chunk's spans, span_count how
-- many there are, errors how many have status ERROR (schema version 5, for the trace list's
-- error filter). packed is the binary format of project_chunks.go (version byte 1): a string
-- table, then one record per span in spans.id order with the span and parent ids as 64-bit ints,
-- start, end, kind, status, service / name / status message as string-table indexes and the
-- attributes JSON. Reading a 161,000-span trace is then ~160 rows instead of 161,000.
CREATE TABLE IF NOT EXISTS trace_chunks (
	trace_id      TEXT NOT NULL,
	first_span_id INTEGER NOT NULL,
	last_span_id  INTEGER NOT NULL,
	span_count    INTEGER NOT NULL,
	packed        BLOB NOT NULL,
	errors        INTEGER, -- spans with status ERROR among them; NULL in chunks written before version 5
	PRIMARY KEY (trace_id, first_span_id)
);

-- trace_chunks_start has one row: spans with id >= span_id have their trace_chunks. A database
-- created before version 2 gets max(spans.id) + 1 here when it is first opened by this version,
-- so readers fall back to the spans rows for traces that began before the upgrade.
CREATE TABLE IF NOT EXISTS trace_chunks_start (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	span_id INTEGER NOT NULL
);
INSERT OR IGNORE INTO trace_chunks_start(id, span_id) SELECT 1, COALESCE(max(id), 0) + 1 FROM spans;

-- Summaries (schema version 3), kept by the trigger below in the transaction of every projection
-- slice (the projector's last statement in a slice updates projection_state), so they always
-- describe exactly the projected rows. A database of an earlier version is summarized when this
-- version first opens it (schema_blocks.go), in bounded steps.
--
-- log_blocks: logs by fixed blocks of 4,096 ids (block = id >> 12) with the oldest and newest
-- time_unix_nano among them. Log ids grow in projection order, which roughly follows time; the
-- newest time over the blocks at or below an id bounds every log at or below that id, which lets
-- a newest-first search walk index candidates by descending id and stop exactly when no older id
-- can still make the page (internal/query/logblocks.go).
CREATE TABLE IF NOT EXISTS log_blocks (
	block              INTEGER PRIMARY KEY,
	min_time_unix_nano INTEGER NOT NULL,
	max_time_unix_nano INTEGER NOT NULL,
	logs               INTEGER NOT NULL
);

-- service_counts: records per (service, signal) and the newest record time, for /services.
-- service is '' when service.name is absent; signal is 'logs', 'spans' (last seen = newest start
-- time) or 'metrics' (records = metric streams; last seen is not tracked and stays 0).
CREATE TABLE IF NOT EXISTS service_counts (
	service             TEXT NOT NULL,
	signal              TEXT NOT NULL,
	records             INTEGER NOT NULL,
	last_seen_unix_nano INTEGER NOT NULL,
	PRIMARY KEY (service, signal)
) WITHOUT ROWID;

-- summary_state has one row: logs, spans and metrics rows with ids up to these are counted in
-- log_blocks and service_counts.
CREATE TABLE IF NOT EXISTS summary_state (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	log_id    INTEGER NOT NULL,
	span_id   INTEGER NOT NULL,
	metric_id INTEGER NOT NULL
);
INSERT OR IGNORE INTO summary_state(id, log_id, span_id, metric_id) VALUES (1, 0, 0, 0);

-- summarize_slice adds the rows projected since summary_state to the summaries. It reads only
-- those rows (rowid ranges), once per slice.
CREATE TRIGGER IF NOT EXISTS summarize_slice AFTER UPDATE OF raw_id ON projection_state
BEGIN
	INSERT INTO log_blocks(block, min_time_unix_nano, max_time_unix_nano, logs)
		SELECT id >> 12, min(time_unix_nano), max(time_unix_nano), count(*) FROM logs
		WHERE id > (SELECT log_id FROM summary_state WHERE id = 1) GROUP BY id >> 12
		ON CONFLICT(block) DO UPDATE SET
			min_time_unix_nano = min(min_time_unix_nano, excluded.min_time_unix_nano),
			max_time_unix_nano = max(max_time_unix_nano, excluded.max_time_unix_nano),
			logs = logs + excluded.logs;
	INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
		SELECT coalesce(service, ''), 'logs', count(*), max(time_unix_nano) FROM logs
		WHERE id > (SELECT log_id FROM summary_state WHERE id = 1) GROUP BY 1
		ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records,
			last_seen_unix_nano = max(last_seen_unix_nano, excluded.last_seen_unix_nano);
	INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
		SELECT coalesce(service, ''), 'spans', count(*), max(start_time_unix_nano) FROM spans
		WHERE id > (SELECT span_id FROM summary_state WHERE id = 1) GROUP BY 1
		ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records,
			last_seen_unix_nano = max(last_seen_unix_nano, excluded.last_seen_unix_nano);
	INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
		SELECT coalesce(service, ''), 'metrics', count(*), 0 FROM metrics
		WHERE id > (SELECT metric_id FROM summary_state WHERE id = 1) GROUP BY 1
		ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records;
	UPDATE summary_state SET
		log_id = coalesce((SELECT max(id) FROM logs), log_id),
		span_id = coalesce((SELECT max(id) FROM spans), span_id),
		metric_id = coalesce((SELECT max(id) FROM metrics), metric_id)
	WHERE id = 1;
END;
