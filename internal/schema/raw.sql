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


-- totals counts, per signal, the raw rows pruned since the data directory
-- was created: requests, their records and payload bytes, added in the transaction that deletes
-- them. With the rows raw still holds they make the totals of everything raw.db took, which
-- outlive the process (whose own counters start at zero) and the pruning (store's totals.go).
CREATE TABLE IF NOT EXISTS totals (
	signal   INTEGER PRIMARY KEY,
	requests INTEGER NOT NULL DEFAULT 0,
	records  INTEGER NOT NULL DEFAULT 0,
	bytes    INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO totals(signal) VALUES (1), (2), (3);
