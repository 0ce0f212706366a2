package schema

// LogBlockShift is log_blocks' block size as a shift: block = logs.id >> LogBlockShift. The
// logs_trace_block index (schema.sql) is keyed by the same blocks.
const LogBlockShift = 12

// SpanBlockShift sizes the blocks of spans ids that the spans_trace_block index (schema.sql) is
// keyed by: block = spans.id >> SpanBlockShift.
const SpanBlockShift = 12

// PointBlockShift sizes the blocks of rowids of each points table (schema.sql): block = rowid >>
// PointBlockShift, stored in the tables' block column and summarized in point_blocks.
const PointBlockShift = 12

// LogTextShift sizes the groups log_text indexes: one document per 1<<LogTextShift consecutive
// log ids, rowid = id >> LogTextShift. A match names a group; its rows are the candidates.
const LogTextShift = 4
