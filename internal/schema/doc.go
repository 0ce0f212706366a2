// Package schema owns the SQL of otelbench's databases and its version: schema_common.sql
// (what every projected database holds), schema.sql (telemetry.db's logs and metrics) and
// schema_traces.sql (the trace tables, in traces.db or telemetry.db), with their conventions
// documented in the files. Apply creates a database's parts, checks its version (Version) and
// refuses any other one.
// The block and group sizes the indexes are keyed by (LogBlockShift, SpanBlockShift,
// PointBlockShift, LogTextShift) are part of the schema and live here too.
package schema
