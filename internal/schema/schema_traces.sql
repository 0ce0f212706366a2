-- otelbench store schema, part 3 of 3: the trace tables (schema_common.sql comes first), in
-- telemetry.db, or in traces.db with store.Config.TracesFile. Embedded by schema.go and applied
-- by Open.

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
-- spans_trace_block finds a trace's spans, keyed by the span's block of
-- 4,096 ids first (id >> 12, store.SpanBlockShift) for the reason logs_trace_block is: a plain
-- index on trace_id took each slice's traces at random pages of the whole index (projection of
-- 10-span traces with random ids fell from ~110k to 52k spans/s at 1.6M spans). A lookup seeks
-- once per block that can hold the trace's spans, the blocks of its trace_chunks' id ranges
-- (below):
--   SELECT * FROM spans WHERE (id >> 12) IN (5, 6) AND trace_id = ?
CREATE INDEX IF NOT EXISTS spans_trace_block ON spans(id >> 12, trace_id);
-- spans_root_service_start lists a service's traces by their root spans, the
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

-- trace_chunks holds every trace a second time, packed for the trace view: one row per
-- (projection slice, trace), written by the projector in the same transaction as the spans rows
-- (so a rolled-back slice leaves neither, and a re-projected slice writes each chunk once).
-- first_span_id / last_span_id are the spans.id range of the chunk's spans, span_count how many
-- there are, errors how many have status ERROR (for the trace list's error filter). packed is
-- internal/tracechunk's format: a string table and a table of the spans' resources (by
-- resources.hash), then one record per span in spans.id order. Reading a 161,000-span trace is
-- then ~160 rows instead of 161,000.
CREATE TABLE IF NOT EXISTS trace_chunks (
	trace_id      TEXT NOT NULL,
	first_span_id INTEGER NOT NULL,
	last_span_id  INTEGER NOT NULL,
	span_count    INTEGER NOT NULL,
	packed        BLOB NOT NULL,
	errors        INTEGER NOT NULL, -- spans with status ERROR among them
	PRIMARY KEY (trace_id, first_span_id)
);
