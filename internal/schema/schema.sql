-- otelbench store schema, part 2 of 3: telemetry.db's logs, metrics and their summaries
-- (schema_common.sql comes first). Embedded by schema.go and applied by Open.

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
-- logs_trace_block finds a trace's logs. It is keyed by the log's block first
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
-- tokenizer: the hex of its UTF-8 bytes, "k f" = 6b2066 (stage's
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

-- The four points tables below each hold a block column, the row's block of 4,096 rowids
-- (block = rowid >> 12, store.PointBlockShift; SQLite allows no rowid in an index expression,
-- so the projector stores it), and each is indexed by (block, metric_id, time_unix_nano).
-- Keyed by (metric_id, time_unix_nano) instead, each of the load's 5,120 series took its points
-- at the end of its own range of the index, and once the ranges no longer shared leaves nearly
-- every point read a page the cache no longer held and wrote it back at the commit (pages read
-- per 1,000 points went from 36 to 525 within one catch-up; docs/benchmarks/store.md). A series
-- read seeks once per block in its time range, the blocks point_blocks (below) lists:
--   SELECT * FROM number_points WHERE block IN (SELECT block FROM point_blocks
--       WHERE point_table = 'number_points' AND max_time_unix_nano >= ?1 AND min_time_unix_nano < ?2)
--     AND metric_id = ?3 AND time_unix_nano >= ?1 AND time_unix_nano < ?2

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
	flags                INTEGER NOT NULL DEFAULT 0,
	block                INTEGER NOT NULL -- rowid >> 12 (PointBlockShift)
);

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
	flags                INTEGER NOT NULL DEFAULT 0,
	block                INTEGER NOT NULL -- rowid >> 12 (PointBlockShift)
);

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
	flags                INTEGER NOT NULL DEFAULT 0,
	block                INTEGER NOT NULL -- rowid >> 12 (PointBlockShift)
);

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
	flags                INTEGER NOT NULL DEFAULT 0,
	block                INTEGER NOT NULL -- rowid >> 12 (PointBlockShift)
);

-- log_blocks (a summary; see schema_common.sql): logs by fixed blocks of 4,096
-- ids (block = id >> 12) with the oldest and newest time_unix_nano among them. Log ids grow in projection order, which roughly follows time; the
-- newest time over the blocks at or below an id bounds every log at or below that id, which lets
-- a newest-first search walk index candidates by descending id and stop exactly when no older id
-- can still make the page (internal/query/logblocks.go).
CREATE TABLE IF NOT EXISTS log_blocks (
	block              INTEGER PRIMARY KEY,
	min_time_unix_nano INTEGER NOT NULL,
	max_time_unix_nano INTEGER NOT NULL,
	logs               INTEGER NOT NULL
);

-- point_blocks: the blocks of each points table (point_table is its name,
-- block = rowid >> 12) with the oldest and newest time_unix_nano among their points, kept by the
-- projector in each slice's transaction (commit.go's summarize), so a series read seeks only in
-- the blocks that can hold its time range. Points ids grow in projection order, which roughly
-- follows time, so a time range maps to few blocks.
CREATE TABLE IF NOT EXISTS point_blocks (
	point_table        TEXT NOT NULL,
	block              INTEGER NOT NULL,
	min_time_unix_nano INTEGER NOT NULL,
	max_time_unix_nano INTEGER NOT NULL,
	points             INTEGER NOT NULL,
	PRIMARY KEY (point_table, block)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS number_points_block ON number_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS histogram_points_block ON histogram_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS exp_histogram_points_block ON exp_histogram_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS summary_points_block ON summary_points(block, metric_id, time_unix_nano);
