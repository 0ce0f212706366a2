package store

import (
	"context"

	"github.com/otelbench/otelbench/internal/diskfull"
)

// loadState reads the raw id sequence and the projection backlog of each projected database.
func (s *Store) loadState(ctx context.Context) error {
	var maxRaw, top, lag int64
	err := s.writeDB.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM raw`).Scan(&maxRaw)
	if err != nil {
		return diskfull.Classify("read raw state", err)
	}
	for _, sh := range s.shards {
		var hwm, backlog, oldest int64
		err = sh.db.QueryRowContext(ctx, `SELECT raw_id FROM projection_state WHERE id = 1`).Scan(&hwm)
		if err != nil {
			return diskfull.Classify("read "+sh.name+" projection state", err)
		}
		// oldest counts every signal's rows: the projector passes them all (readRaw).
		takes := "records"
		if cond := sh.takesSQL(); cond != "" {
			takes = "CASE WHEN " + cond + " THEN records ELSE 0 END"
		}
		err = s.writeDB.QueryRowContext(ctx, `SELECT COALESCE(sum(`+takes+`), 0),
			COALESCE(min(received_unix_nano), 0) FROM raw WHERE id > ?`, hwm).Scan(&backlog, &oldest)
		if err != nil {
			return diskfull.Classify("read "+sh.name+" projection backlog", err)
		}
		top, lag = max(top, hwm), lag+backlog
		s.stats.projectedRawID[sh.index].Store(hwm)
		s.stats.oldestUnproj[sh.index].Store(oldest)
	}
	s.nextRawID = max(maxRaw, top) + 1
	s.stats.lastRawID.Store(max(maxRaw, top))
	s.stats.lagRecords.Store(lag)
	if err := s.loadTotals(ctx); err != nil {
		return err
	}
	return s.loadUnprojectable(ctx)
}
