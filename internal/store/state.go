package store

import (
	"context"
	"fmt"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// loadState reads the raw log's durable mark and the projection backlog of each projected
// database: from the segments' counts, and for the segment a mark falls inside, from its records
// after the mark.
func (s *Store) loadState(ctx context.Context) error {
	last := s.raw.Durable()
	var top, lag int64
	for _, sh := range s.shards {
		var hwm int64
		err := sh.db.QueryRowContext(ctx, `SELECT raw_id FROM projection_state WHERE id = 1`).Scan(&hwm)
		if err != nil {
			return diskfull.Classify("read "+sh.name+" projection state", err)
		}
		backlog, oldest, err := s.backlog(sh, hwm)
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
	s.stats.lastRawID.Store(last)
	s.stats.lagRecords.Store(lag)
	s.loadTotals()
	return s.loadUnprojectable(ctx)
}

// backlog returns the records after hwm of the signals sh takes and the receive time of the
// first raw row after hwm of any signal (the projector passes them all), 0 if none.
func (s *Store) backlog(sh *shard, hwm int64) (records, oldest int64, err error) {
	r := s.raw.NewReader()
	defer r.Close()
	var rows []seglog.Row
	for _, sg := range s.raw.Segments() {
		if sg.Last <= hwm || sg.Last < sg.First {
			continue
		}
		if sg.First > hwm { // wholly after the mark: its counts
			if oldest == 0 {
				if rows, _, err = r.Read(hwm, seglog.Limits{Rows: 1}, rows); err != nil {
					return 0, 0, rawError("read raw backlog", err)
				}
				if len(rows) > 0 {
					oldest = rows[0].Received
				}
			}
			for sig, c := range sg.Counts {
				if sh.takes(signal.Signal(sig)) {
					records += c.Records
				}
			}
			continue
		}
		// The segment the mark falls in: its rows after the mark.
		for after := hwm; after < sg.Last; {
			rows, after, err = r.Read(after, seglog.Limits{Rows: 4096}, rows)
			if err != nil {
				return 0, 0, rawError("read raw backlog", err)
			}
			if len(rows) == 0 {
				break
			}
			for _, row := range rows {
				if oldest == 0 {
					oldest = row.Received
				}
				if row.ID <= sg.Last && sh.takes(row.Signal) {
					records += int64(row.Records)
				}
			}
		}
	}
	return records, oldest, nil
}
