package rawlog

import (
	"sync/atomic"
	"time"
)

// Raw pruning. The raw log holds every accepted payload; once a payload is projected and the
// projection is durable, the raw copy is only kept for Config.Retention, then deleted so the log
// stops growing. The log is deleted in whole segments (seglog.Log.DeleteThrough): a segment goes
// once every record in it is projected durably by every projector and its newest record is older
// than the retention (at once while Bound.PruneNow).
//
// Crash safety: a segment is deleted only when its last id is at or below the mark the owner
// last passed to SetProjected, which it must pass only once that projection is durable on disk
// in every projected database (the store's prune watcher checkpoints each and reads its
// high-water mark). The writer goroutine deletes up to that mark, between two groups or when
// idle. The segments' totals are added to the pruned totals, written atomically, before the
// segments are removed (totals.go).

// pruneCheckEvery is the least time between two of the writer's looks at the segments while it
// writes groups (SetProjected nudges it when the mark moves).
const pruneCheckEvery = 100 * time.Millisecond

// pruneState is shared by SetProjected (which publishes durable) and the writer goroutine
// (which owns totals and deletes).
type pruneState struct {
	durable atomic.Int64 // projected raw ids <= durable are durable in every projected database
	pruned  atomic.Int64 // every raw id <= pruned is deleted
	totals  prunedTotals // what the deleted segments held (totals.go); the writer's
}

// SetProjected tells the log that every raw row with id <= id is projected, durably, by every
// projector: the input of pruning. A mark lower than one passed before is ignored.
func (l *Log) SetProjected(id int64) {
	if id > l.prune.durable.Load() {
		l.prune.durable.Store(id)
		l.q.nudge() // an idle writer prunes too
	}
}

// Projected returns the highest mark SetProjected was passed (0 before any).
func (l *Log) Projected() int64 { return l.prune.durable.Load() }

// Pruned returns the raw id at or below which every payload has been deleted (0 when none has).
func (l *Log) Pruned() int64 { return l.prune.pruned.Load() }

// loadPruneState reads the pruned totals, finishes a deletion a crash interrupted (the totals
// already count those segments) and reads how far the log was pruned before Open.
func (l *Log) loadPruneState() error {
	t, err := readPrunedTotals(l.cfg.Dir)
	if err != nil {
		return err
	}
	l.prune.totals = t
	if t.Through > 0 {
		if _, _, err := l.seg.DeleteThrough(t.Through); err != nil {
			return rawError("finish deleting pruned segments", err)
		}
	}
	l.prune.pruned.Store(l.seg.Segments()[0].First - 1)
	return nil
}

// cutoff is the receive time before which the writer may prune a projected raw row: the
// retention ago, or now while the bound says so.
func (l *Log) cutoff() int64 {
	if b := l.cfg.Bound; b != nil && b.PruneNow() {
		return time.Now().UnixNano()
	}
	return time.Now().Add(-l.cfg.Retention).UnixNano()
}

// prune deletes the segments that are projected, durable in every projected database and past
// the retention. idle says the writer has nothing queued: then the active segment may go too (a
// new one is started), else only sealed ones, and the look is rate-limited.
func (w *writer) prune(idle bool) {
	l := w.l
	if !l.cfg.Prune || l.prune.durable.Load() <= l.prune.pruned.Load() {
		return
	}
	if now := time.Now(); !idle && now.Sub(w.checked) < pruneCheckEvery {
		return
	} else {
		w.checked = now
	}
	segs := l.seg.Segments()
	if !idle {
		segs = segs[:len(segs)-1]
	}
	hwm, cutoff, t := l.prune.durable.Load(), l.cutoff(), l.prune.totals
	through := int64(0)
	for _, sg := range segs {
		if sg.Last < sg.First || sg.Last > hwm || (sg.Last > t.Through && sg.LastReceived >= cutoff) {
			break
		}
		if sg.Last > t.Through {
			t.add(sg.Counts)
		}
		through = sg.Last
	}
	if through <= l.prune.pruned.Load() {
		return
	}
	if through > t.Through {
		t.Through = through
		if err := writePrunedTotals(l.cfg.Dir, t); err != nil {
			l.cfg.Logger.Warn("store: prune raw", "err", err)
			return
		}
		l.prune.totals = t
	}
	if _, _, err := l.seg.DeleteThrough(through); err != nil {
		l.cfg.Logger.Warn("store: prune raw", "err", rawError("delete segments", err))
		return
	}
	l.prune.pruned.Store(l.seg.Segments()[0].First - 1)
}
