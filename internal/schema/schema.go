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
// tables (traces.db, or telemetry.db in the one-file layout).
var (
	//go:embed schema_common.sql
	commonSQL string
	//go:embed schema.sql
	schemaSQL string
	//go:embed schema_traces.sql
	tracesSQL string
)

// Parts says which parts of the schema a database file holds.
type Parts uint8

// The parts: LogsMetrics telemetry.db's logs and metrics, Traces the trace tables (traces.db,
// or telemetry.db in the one-file layout).
const (
	LogsMetrics Parts = 1 << iota
	Traces
)

// PointTables are the tables of metric points, in the order of the projector's nextPoint.
var PointTables = [...]string{"number_points", "histogram_points", "exp_histogram_points", "summary_points"}

// SQL returns the schema text that creates ps.
func (ps Parts) SQL() string {
	var b strings.Builder
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

// Version is the version of the schema (and of the trace-chunk format, tracechunk.Version) this
// build writes and reads. There is one: a database of another version is refused at open with
// a *VersionError, since no released version exists to migrate from.
const Version = 12

// VersionError is a database's schema version that this build does not read.
type VersionError struct{ Found int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("database schema version %d, this build reads version %d only: "+
		"start with an empty --data directory (move the old one aside; there are no released versions to migrate from)",
		e.Found, Version)
}

// Text returns the SQL text that creates the relational tables (schema_common.sql,
// schema.sql, schema_traces.sql), for documentation and for tools that want to inspect it.
func Text() string {
	return (LogsMetrics | Traces).SQL()
}

// Apply creates the tables of one database (a no-op when they exist) and checks its schema
// version: a new database gets Version, one of another version a *VersionError.
func Apply(ctx context.Context, db *sql.DB, ps Parts) error {
	var v int
	err := db.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v)
	switch {
	case err == nil && v != Version:
		return &VersionError{Found: v}
	case err != nil && !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table"):
		return diskfull.Classify("read schema version", err)
	}
	fresh := err != nil
	schema := "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);\n" + ps.SQL()
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return diskfull.Classify("apply schema", err)
	}
	if fresh {
		if _, err := db.ExecContext(ctx, "INSERT INTO schema_version(version) VALUES (?)", Version); err != nil {
			return diskfull.Classify("write schema version", err)
		}
	}
	return nil
}

// ConnPragmas apply to every connection to otelbench's databases. busy_timeout only matters
// for other processes (the sqlite3 CLI, say) holding locks: inside the process each database
// has one writing goroutine.
var ConnPragmas = []string{"busy_timeout(10000)", "foreign_keys(off)", "temp_store(memory)"}
