-- otelbench store: the raw database, raw.db in Config.Dir. Embedded by schema.go.
-- Only the writer goroutine writes here; see schema.sql for the relational side.

-- raw holds accepted requests. id is assigned by the single writer and strictly increases
-- (never reused, even if old rows are pruned). signal: 1 logs, 2 metrics, 3 traces.
-- records is the caller's count of records (log records, spans, data points) in the payload.
-- encoding: 0 = protobuf as received, 1 = zstd-compressed protobuf.
CREATE TABLE IF NOT EXISTS raw (
	id                 INTEGER PRIMARY KEY,
	signal             INTEGER NOT NULL,
	records            INTEGER NOT NULL,
	received_unix_nano INTEGER NOT NULL,
	encoding           INTEGER NOT NULL DEFAULT 0,
	payload            BLOB    NOT NULL
);

