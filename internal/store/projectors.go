package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/otelbench/otelbench/internal/diskfull"
	"github.com/otelbench/otelbench/internal/project"
)

// The projectors. Each projected database has one (internal/project runs its loop and decides
// when it runs); the store starts them in Open with what they use of it (project.Deps) and stops
// them in Close, before its retention and its connections.

// startProjector starts sh's projector; it closes sh.done when it returns, after ctx ends.
func (s *Store) startProjector(ctx context.Context, sh *shard) {
	go func() {
		defer close(sh.done)
		project.Run(ctx, s.projectorDeps(sh))
	}()
}

// projectorDeps returns what sh's projector takes from the store.
func (s *Store) projectorDeps(sh *shard) project.Deps {
	c := &s.stats
	d := project.Deps{
		Name: sh.name, Parts: sh.parts, Filter: sh.filter(), Conn: sh.conn, Raw: sh.raw, Marks: s.raw, Wake: sh.wake,
		Sweep:  &s.retain.sweeps[sh.index],
		Policy: s.newPolicy(),
		Counters: project.Counters{
			Projected: &c.projected, LagRecords: &c.lagRecords,
			OldestUnproj: &c.oldestUnproj[sh.index], ProjectedRawID: &c.projectedRawID[sh.index],
			Slices: &c.slices, Errors: &c.projectErrors, Prefetches: &c.prefetches,
			PagesWritten: &c.pagesWritten, PagesSpilled: &c.pagesSpilled, PagesRead: &c.pagesRead,
			Unprojectable: &c.unprojectable, UnprojectableRecords: &c.unprojectableRecords,
			OffThreadCPU: &c.offThreadCPU, DeferredNanos: &c.deferredNanos, Deferring: &c.deferring,
		},
		SliceRows:  s.cfg.ProjectSlice,
		SliceBytes: s.bound.sliceBytes,
		Projected:  s.notifyProjected,
		Logger:     s.cfg.Logger,
	}
	if hook := sliceHook; hook != nil {
		d.AfterSlice = func(st project.State) { hook(s, sh, st) }
	}
	return d
}

// sliceHook, when set (by tests, before a store opens), sees each slice that projected rows, on
// its projector's goroutine: the store, the database and the policy's state after it.
var sliceHook func(s *Store, sh *shard, st project.State)

// wakeProjector nudges the projectors after a commit; it never blocks.
func (s *Store) wakeProjector() {
	for _, sh := range s.shards {
		select {
		case sh.wake <- struct{}{}:
		default:
		}
	}
}

// newPolicy returns a projector's scheduling policy (internal/project), which reads the lag
// from Stats.
func (s *Store) newPolicy() *project.Policy {
	return project.NewPolicy(project.Config{
		MaxLag: s.cfg.ProjectLag, MaxLagRecords: s.cfg.ProjectLagRecords, CPU: s.cfg.CPU, Clock: s.cfg.Clock,
	}, func() project.Reading {
		st := s.Stats()
		r := project.Reading{LagRecords: st.LagRecords, LagSeconds: st.LagSeconds, WriterBusy: st.WriterBusy,
			Workers: time.Duration(s.stats.offThreadCPU.Load()), DiskPressure: s.bound.over()}
		if readingHook != nil {
			readingHook(&r)
		}
		return r
	})
}

// readingHook, when set (by tests, before a store opens), may change what the policy reads:
// a test on a fake clock fakes the writer's busy time on it.
var readingHook func(*project.Reading)

// loadUnprojectable reads each projected database's unprojectable rows into the counters, and its projected totals into the counters' base.
func (s *Store) loadUnprojectable(ctx context.Context) error {
	c := &s.stats
	for _, sh := range s.shards {
		err := scanInt64s(ctx, sh.db, `SELECT raw_id, records FROM unprojectable ORDER BY raw_id`, func(_, records int64) {
			c.unprojectable.Add(1)
			c.unprojectableRecords.Add(uint64(records))
		})
		if err != nil {
			return diskfull.Classify("read "+sh.name+" unprojectable rows", err)
		}
		err = scanInt64s(ctx, sh.db, `SELECT signal, records FROM projected_totals WHERE signal BETWEEN 1 AND 3`, func(sig, records int64) {
			c.baseProjected[sig] += uint64(records)
		})
		if err != nil {
			return diskfull.Classify("read "+sh.name+" projected totals", err)
		}
	}
	return nil
}

// scanInt64s runs q on db and calls f with the two integer columns of each row.
func scanInt64s(ctx context.Context, db *sql.DB, q string, f func(a, b int64)) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	for rows.Next() {
		var a, b int64
		if err := rows.Scan(&a, &b); err != nil {
			rows.Close()
			return err
		}
		f(a, b)
	}
	return errors.Join(rows.Err(), rows.Close())
}

// Drop and Use make idSweep the projector's project.IDSweep (retention_ids.go).
func (w *idSweep) Drop(resources, scopes, metrics map[[16]byte]int64) {
	w.drop([numKinds]map[[16]byte]int64{resources, scopes, metrics})
}

func (w *idSweep) Use(resources, scopes, metrics []int64) {
	w.use([numKinds][]int64{resources, scopes, metrics})
}
