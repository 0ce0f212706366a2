// Package schema owns the SQL of otelbench's databases and its version: raw.sql (raw.db's raw
// table and totals), schema_common.sql (what every projected database holds), schema.sql
// (telemetry.db's logs and metrics) and schema_traces.sql (the trace tables, in traces.db or
// telemetry.db), with their conventions documented in the files. Apply creates a database's
// parts, checks its version (Version) and upgrades an older one in place, including the bounded,
// resumable catch-ups of the summaries (log_blocks, service_counts) an older database lacks.
// The block and group sizes the indexes are keyed by (LogBlockShift, SpanBlockShift,
// PointBlockShift, LogTextShift) are part of the schema and live here too.
package schema
