package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
)

// schemaSQL creates every table and index; it is idempotent (IF NOT EXISTS throughout).
//
//go:embed schema.sql
var schemaSQL string

// SchemaVersion is the version of schema.sql this package writes and reads.
const SchemaVersion = 1

// Schema returns the SQL text that creates the store's tables (schema.sql), for documentation
// and for tools that want to inspect it.
func Schema() string { return schemaSQL }

// applySchema creates the tables on the write connection and checks the schema version.
func (s *Store) applySchema(ctx context.Context) error {
	if _, err := s.writeDB.ExecContext(ctx, schemaSQL); err != nil {
		return classify("apply schema", err)
	}
	var v int
	err := s.writeDB.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := s.writeDB.ExecContext(ctx, "INSERT INTO schema_version(version) VALUES (?)", SchemaVersion); err != nil {
			return classify("write schema version", err)
		}
	case err != nil:
		return classify("read schema version", err)
	case v > SchemaVersion:
		return fmt.Errorf("store: database schema version %d is newer than this build's %d", v, SchemaVersion)
	}
	return nil
}

// loadState reads the raw id sequence and the projection backlog.
func (s *Store) loadState(ctx context.Context) error {
	var maxRaw, hwm, backlog, oldest int64
	err := s.writeDB.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT max(id) FROM raw), 0),
		(SELECT raw_id FROM projection_state WHERE id = 1)`).Scan(&maxRaw, &hwm)
	if err != nil {
		return classify("read state", err)
	}
	err = s.writeDB.QueryRowContext(ctx, `SELECT COALESCE(sum(records), 0), COALESCE(min(received_unix_nano), 0)
		FROM raw WHERE id > ?`, hwm).Scan(&backlog, &oldest)
	if err != nil {
		return classify("read projection backlog", err)
	}
	s.nextRawID = max(maxRaw, hwm) + 1
	s.stats.lastRawID.Store(max(maxRaw, hwm))
	s.stats.projectedRawID.Store(hwm)
	s.stats.lagRecords.Store(backlog)
	s.stats.oldestUnproj.Store(oldest)
	return nil
}
