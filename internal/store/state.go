package store

import (
	"context"
	"fmt"

	"github.com/otelbench/otelbench/internal/diskfull"
)

// loadState reads the raw log's durable mark and the projection backlog of each projected
// database (rawlog.Log.Backlog).
func (s *Store) loadState(ctx context.Context) error {
	last := s.raw.LastID()
	var top, lag int64
	for _, sh := range s.shards {
		var hwm int64
		err := sh.db.QueryRowContext(ctx, `SELECT raw_id FROM projection_state WHERE id = 1`).Scan(&hwm)
		if err != nil {
			return diskfull.Classify("read "+sh.name+" projection state", err)
		}
		backlog, oldest, err := s.raw.Backlog(hwm, sh.takes)
		if err != nil {
			return err
		}
		top, lag = max(top, hwm), lag+backlog
		s.stats.projectedRawID[sh.index].Store(hwm)
		s.stats.oldestUnproj[sh.index].Store(oldest)
	}
	if top > last {
		return fmt.Errorf("store: the raw log in %s ends at id %d but the projection has passed id %d: "+
			"the raw log was removed or replaced; remove the projected databases too (or the whole data directory) to start anew", s.rawDir, last, top)
	}
	s.stats.lagRecords.Store(lag)
	return s.loadUnprojectable(ctx)
}
