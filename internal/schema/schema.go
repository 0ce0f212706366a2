package schema

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/otelbench/otelbench/internal/diskfull"
)

// The schema's parts, each idempotent (IF NOT EXISTS throughout): commonSQL the tables every
// projected database holds, schemaSQL telemetry.db's logs and metrics, tracesSQL the trace
// tables (traces.db, or telemetry.db in the one-file layout), rawSQL the raw table in raw.db.
var (
	//go:embed schema_common.sql
	commonSQL string
	//go:embed schema.sql
	schemaSQL string
	//go:embed schema_traces.sql
	tracesSQL string
	//go:embed raw.sql
	rawSQL string
)

// Parts says which parts of the schema a database file holds.
type Parts uint8

// The parts: Raw the raw table (raw.db), LogsMetrics telemetry.db's logs and metrics, Traces
// the trace tables (traces.db, or telemetry.db in the one-file layout).
const (
	Raw Parts = 1 << iota
	LogsMetrics
	Traces
)

// PointTables are the tables of metric points, in the order of the projector's nextPoint.
var PointTables = [...]string{"number_points", "histogram_points", "exp_histogram_points", "summary_points"}

// pointIndexesSQL indexes the points tables by block first (schema.sql explains why). It runs
// after schema.sql and after an older database's points tables gain their block column
// (applySchema), so it is not part of schema.sql.
const pointIndexesSQL = `CREATE INDEX IF NOT EXISTS number_points_block ON number_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS histogram_points_block ON histogram_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS exp_histogram_points_block ON exp_histogram_points(block, metric_id, time_unix_nano);
CREATE INDEX IF NOT EXISTS summary_points_block ON summary_points(block, metric_id, time_unix_nano);
`

// SQL returns the schema text that creates ps.
func (ps Parts) SQL() string {
	var b strings.Builder
	if ps&Raw != 0 {
		b.WriteString(rawSQL)
	}
	if ps&(LogsMetrics|Traces) != 0 {
		b.WriteString(commonSQL)
	}
	if ps&LogsMetrics != 0 {
		b.WriteString(schemaSQL)
	}
	if ps&Traces != 0 {
		b.WriteString(tracesSQL)
	}
	return b.String()
}

// Version is the version of the schema this package writes and reads. Version 2 added
// trace_chunks; a version 1 database is upgraded in place by Open (the new tables are created and
// trace_chunks_start records where the packed traces begin). Version 3 added the summaries
// (log_blocks, service_counts, summary_state and the summarize_slice trigger); Open summarizes
// the rows of an older database before it starts projecting (catchUpSummaries). Version 4
// replaced logs_fts (a document per log) with log_text (a document per group of 16 log ids);
// Open indexes an older database's logs into it and drops logs_fts (catchUpLogText). Version 5
// replaced the logs_trace index (trace_id) with logs_trace_block (id >> 12, trace_id) and
// spans_trace (trace_id) with spans_trace_block (id >> 12, trace_id), and added
// trace_chunks.errors: Open builds the new indexes on an older database, drops the old ones and
// adds the column (NULL in the chunks already written). Version 6 replaced spans_service_start
// (every span by service and start) with spans_root_service_start (root spans only): Open builds
// the new index on an older database and drops the old one. Version 7 made log_text's documents
// the distinct trigrams of each group as tokens of the ascii tokenizer (textgrams.go) instead of
// the group's bodies under the trigram tokenizer: Open rebuilds an older database's log_text in
// bounded, resumable steps (catchUpLogGrams). Version 8 split the schema into parts, each with a
// summary trigger of its own in place of summarize_slice (Open replaces it), so that a new data
// directory can keep its trace tables in traces.db under a projector of their own
// (Config.TracesFile, shard.go). Since then the projector writes the summaries itself
// (summarize) and Open drops those triggers; the tables are unchanged, so the version is too,
// and a build that still has the triggers creates them again when it opens the database.
// Version 9 gave the points tables a block column (rowid >> PointBlockShift) and replaced their
// (metric_id, time_unix_nano) indexes with (block, metric_id, time_unix_nano), summarized by the
// new point_blocks: Open adds the column to an older database (NULL in its rows, which the new
// index keeps in the old order as one block), builds the new indexes and drops the old ones.
// Version 10 added raw.db's totals and each projected database's projected_totals (counts since
// the data directory was created) and unprojectable (the raw rows a projector passed by); an
// older database's totals start at zero.
const Version = 10

// Text returns the SQL text that creates the relational tables (schema_common.sql,
// schema.sql, schema_traces.sql) and the points indexes (pointIndexesSQL), followed by the raw
// table (raw.sql), for documentation and for tools that want to inspect it.
func Text() string {
	return (LogsMetrics | Traces).SQL() + "\n" + pointIndexesSQL + "\n" + rawSQL
}

// LogTextCatchUp brings an older database's log_text up to this version (the projector owns how
// log bodies become documents). fresh says the database was just created; version is the one
// it had.
type LogTextCatchUp func(ctx context.Context, db *sql.DB, fresh bool, version int) error

// LogsMetricsSQL is schema.sql alone: what creates log_text anew.
func LogsMetricsSQL() string { return schemaSQL }

// Apply creates the tables of one database, checks its schema version and upgrades an older
// one; with LogsMetrics, logText upgrades its log_text before the version moves.
func Apply(ctx context.Context, db *sql.DB, ps Parts, logText LogTextCatchUp) error {
	schema := "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);\n" + ps.SQL()
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return diskfull.Classify("apply schema", err)
	}
	var v int
	err := db.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v)
	fresh := errors.Is(err, sql.ErrNoRows)
	switch {
	case fresh:
		if _, err := db.ExecContext(ctx, "INSERT INTO schema_version(version) VALUES (?)", Version); err != nil {
			return diskfull.Classify("write schema version", err)
		}
	case err != nil:
		return diskfull.Classify("read schema version", err)
	case v > Version:
		return fmt.Errorf("store: database schema version %d is newer than this build's %d", v, Version)
	}
	// Before the version moves: an interrupted catch-up resumes at the next Open.
	if ps&(LogsMetrics|Traces) != 0 {
		if err := catchUpSummaries(ctx, db, ps); err != nil {
			return err
		}
	}
	if ps&LogsMetrics != 0 {
		if err := logText(ctx, db, fresh, v); err != nil {
			return err
		}
		// Version 5: schema.sql has just built logs_trace_block, which replaces logs_trace.
		if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS logs_trace`); err != nil {
			return diskfull.Classify("drop the version 4 log trace index", err)
		}
		// Version 9: the points tables' block column and the indexes keyed by it.
		for _, t := range PointTables {
			if err := addColumn(ctx, db, t, "block", "INTEGER"); err != nil {
				return err
			}
		}
		if _, err := db.ExecContext(ctx, pointIndexesSQL); err != nil {
			return diskfull.Classify("index the points tables by block", err)
		}
		for _, t := range PointTables {
			if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS `+t+`_metric_time`); err != nil {
				return diskfull.Classify("drop the version 8 index of "+t, err)
			}
		}
	}
	if ps&Traces != 0 {
		// Version 5: spans_trace_block replaces spans_trace; trace_chunks gains errors (NULL in
		// older rows). Version 6: spans_root_service_start replaces spans_service_start.
		if _, err := db.ExecContext(ctx, `DROP INDEX IF EXISTS spans_trace; DROP INDEX IF EXISTS spans_service_start`); err != nil {
			return diskfull.Classify("drop the version 4 and 5 span indexes", err)
		}
		if err := addColumn(ctx, db, "trace_chunks", "errors", "INTEGER"); err != nil {
			return err
		}
	}
	if !fresh && v < Version {
		if _, err := db.ExecContext(ctx, "UPDATE schema_version SET version = ?", Version); err != nil {
			return diskfull.Classify("write schema version", err)
		}
	}
	return nil
}

// addColumn adds column col (of type typ) to table unless it has it.
func addColumn(ctx context.Context, db *sql.DB, table, col, typ string) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, col).Scan(&n); err != nil {
		return diskfull.Classify("read the columns of "+table, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE "+table+" ADD COLUMN "+col+" "+typ); err != nil {
		return diskfull.Classify("add "+table+"."+col, err)
	}
	return nil
}

// ConnPragmas apply to every connection to otelbench's databases. busy_timeout only matters
// for other processes (the sqlite3 CLI, say) holding locks: inside the process each database
// has one writing goroutine.
var ConnPragmas = []string{"busy_timeout(10000)", "foreign_keys(off)", "temp_store(memory)"}
