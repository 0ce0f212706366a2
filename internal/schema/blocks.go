package schema

import (
	"context"
	"database/sql"

	"github.com/otelbench/otelbench/internal/diskfull"
)

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

// SummaryStep bounds the ids of one table that one catch-up transaction summarizes, so upgrading
// a large database never sorts more than this many rows at once (the GROUP BY of the summarizing
// statements uses a temporary sorter, which temp_store=memory keeps in RAM).
var SummaryStep int64 = 1 << 16 // a variable for tests

// summaryTable is one table the summaries count, with the statements that add the rows in an id
// range (lo, hi] to them.
type summaryTable struct {
	table, stateCol string
	part            Parts // the schema part that holds the table
	stmts           []string
}

var summaryTables = []summaryTable{
	{"logs", "log_id", LogsMetrics, []string{
		`INSERT INTO log_blocks(block, min_time_unix_nano, max_time_unix_nano, logs)
			SELECT id >> 12, min(time_unix_nano), max(time_unix_nano), count(*) FROM logs
			WHERE id > ?1 AND id <= ?2 GROUP BY id >> 12
			ON CONFLICT(block) DO UPDATE SET
				min_time_unix_nano = min(min_time_unix_nano, excluded.min_time_unix_nano),
				max_time_unix_nano = max(max_time_unix_nano, excluded.max_time_unix_nano),
				logs = logs + excluded.logs`,
		`INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
			SELECT coalesce(service, ''), 'logs', count(*), max(time_unix_nano) FROM logs
			WHERE id > ?1 AND id <= ?2 GROUP BY 1
			ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records,
				last_seen_unix_nano = max(last_seen_unix_nano, excluded.last_seen_unix_nano)`,
	}},
	{"spans", "span_id", Traces, []string{
		`INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
			SELECT coalesce(service, ''), 'spans', count(*), max(start_time_unix_nano) FROM spans
			WHERE id > ?1 AND id <= ?2 GROUP BY 1
			ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records,
				last_seen_unix_nano = max(last_seen_unix_nano, excluded.last_seen_unix_nano)`,
	}},
	{"metrics", "metric_id", LogsMetrics, []string{
		`INSERT INTO service_counts(service, signal, records, last_seen_unix_nano)
			SELECT coalesce(service, ''), 'metrics', count(*), 0 FROM metrics
			WHERE id > ?1 AND id <= ?2 GROUP BY 1
			ON CONFLICT(service, signal) DO UPDATE SET records = records + excluded.records`,
	}},
}

// catchUpSummaries adds every row of the tables in ps not yet in summary_state to log_blocks and
// service_counts, in transactions of at most SummaryStep ids, each advancing summary_state with
// its rows (so an interrupted upgrade resumes where it stopped). It runs at Open, before the
// projector starts, where it is a no-op unless the database was written by a version without
// the summaries (schema version < 3): from then on the projector keeps them current (summarize).
func catchUpSummaries(ctx context.Context, db *sql.DB, ps Parts) error {
	for _, t := range summaryTables {
		if ps&t.part == 0 {
			continue
		}
		for {
			var done, last int64
			err := db.QueryRowContext(ctx, `SELECT (SELECT `+t.stateCol+` FROM summary_state WHERE id = 1),
				coalesce((SELECT max(id) FROM `+t.table+`), 0)`).Scan(&done, &last)
			if err != nil {
				return diskfull.Classify("read summary state", err)
			}
			if done >= last {
				break
			}
			hi := min(done+SummaryStep, last)
			if err := summarizeRange(ctx, db, t, done, hi); err != nil {
				return diskfull.Classify("summarize "+t.table, err)
			}
		}
	}
	return nil
}

// SummarizeLogs adds the logs with ids in (lo, hi] to the summaries, as one step of the catch-up
// (tests use it to leave a catch-up part-way).
func SummarizeLogs(ctx context.Context, db *sql.DB, lo, hi int64) error {
	return summarizeRange(ctx, db, summaryTables[0], lo, hi)
}

func summarizeRange(ctx context.Context, db *sql.DB, t summaryTable, lo, hi int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range t.stmts {
		if _, err := tx.ExecContext(ctx, q, lo, hi); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE summary_state SET `+t.stateCol+` = ? WHERE id = 1`, hi); err != nil {
		return err
	}
	return tx.Commit()
}
