package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
	"github.com/otelbench/otelbench/internal/stage"
)

// maxSliceRecords bounds the records one projection transaction takes (beyond the first raw
// row), so a slice of large requests still commits in bounded time. Each raw row counts
// sliceRowWeight records more than it holds.
const maxSliceRecords = 8192

// sliceRowWeight is what a raw row counts toward maxSliceRecords beyond its records. Rows of one
// record, which Config.ProjectSlice (2,048 rows) bounds alone, paid a slice's fixed costs (the
// commit, the FTS5 segment flush and merge, the summaries, the newest leaves written again) over
// 512 records; they now make slices of 1,170. Rows of ten records still make slices of 512 rows
// (5,120 records, whose memory the 100 MB budget was measured with: 8,192 records a slice added
// ~12 MB of peak RSS), and rows of 100 records slices of 77 (81 without the weight).
const sliceRowWeight = 6

// skipFactor bounds the rows of other signals a projector of some signals reads past in a slice:
// at most skipFactor times its slice's rows in all (readRaw).
const skipFactor = 8

// maxSliceBytes bounds the raw payload bytes one slice takes (beyond the first raw row), so that
// its memory is bounded too: the payloads read and the records decoded from them. Without it a
// slice of 512 requests of 16 records with 4 MiB bodies would hold 2 GiB. Slices of the load's
// requests (a few KiB each) never reach it.
const maxSliceBytes = 8 << 20

// sliceWeight is what r counts toward maxSliceRecords: its records and sliceRowWeight.
func sliceWeight(r *rawlog.Row) int64 { return r.Records + sliceRowWeight }

// wakeProjector nudges the projectors after a commit; it never blocks.
func (s *Store) wakeProjector() {
	for _, sh := range s.shards {
		select {
		case sh.wake <- struct{}{}:
		default:
		}
	}
}

// runProjector projects raw rows into sh slice by slice until ctx is cancelled, on a thread of
// its own under SCHED_IDLE (project.RunLowered). A failed slice is rolled back and retried with
// backoff; the slice in progress when ctx ends is finished.
func (s *Store) runProjector(ctx context.Context, sh *shard) {
	defer close(sh.done)
	project.RunLowered(func(err error) {
		s.cfg.Logger.Warn("store: projector runs at normal priority", "db", sh.name, "err", err)
	}, func() { s.project(ctx, sh) })
}

// newPolicy returns the projector's scheduling policy (internal/project), which reads the lag
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

// project is a projector's loop (runProjector); pol decides when it runs (internal/project).
func (s *Store) project(ctx context.Context, sh *shard) {
	p := newProjector(s, sh)
	defer p.close()
	pol := s.newPolicy()
	p.policy = pol
	backoff := 50 * time.Millisecond
	var lastSlice time.Time // start of the last slice that projected rows
	for ctx.Err() == nil {
		if !pol.Gather(ctx, lastSlice) {
			return
		}
		if pol.Check() {
			s.stats.deferring.Store(true)
			ok := pol.Wait(ctx, func(d time.Duration) { s.stats.deferredNanos.Add(int64(d)) })
			s.stats.deferring.Store(false)
			if !ok {
				return
			}
		}
		start := pol.Now()
		n, err := p.projectNext(ctx, func(int) {
			// A slice of a catch-up, which ran on the boost worker; the last one returns.
			lastSlice = start
			s.notifyProjected()
			start = pol.Now()
		})
		if err != nil {
			s.stats.projectErrors.Add(1)
			s.cfg.Logger.Warn("store: projection slice failed; retrying", "db", sh.name, "after_raw_id", p.hwm, "err", err)
			p.reset()
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		if n > 0 {
			lastSlice = start
			s.notifyProjected()
			continue
		}
		pol.Sliced(0, 0, true) // nothing to project: Idle
		select {
		case <-ctx.Done():
		case <-sh.wake:
		}
	}
}

// projector is the state owned by a projector goroutine: the projection of raw rows into one
// database (shard).
type projector struct {
	s  *Store
	sh *shard

	hwm        int64 // projected raw id, as committed
	nextLogID  int64
	nextSpanID int64
	nextPoint  [len(schema.PointTables)]int64 // the rowid the next row of each points table takes
	loaded     bool

	rows   []rawlog.Row
	readAt time.Time // when the current slice read rows

	resCache, scopeCache, metricCache map[[16]byte]int64

	stageRes stage.ResCache // the stages' resources by their bytes (rescache.go)

	stage slice
	ins   *inserts
	text  textIndexer

	next    *prefetch       // the next slice, staged while the current one commits
	commits uint64          // the writer's commits when the last slice was taken
	backlog bool            // the last slice left raw rows behind while ingest was idle: catching up
	policy  *project.Policy // when the projector runs (project); nil in tests of slices alone
	stager  *project.Worker // stages next (startPrefetch)
	boost   *project.Worker // projects slices while catching up (projectNext)
}

// sliceHook, when set (by tests, before a store opens), sees the projector after each slice
// that projected rows, on the projector's goroutine.
var sliceHook func(p *projector)

func newProjector(s *Store, sh *shard) *projector {
	p := &projector{s: s, sh: sh}
	p.reset()
	return p
}

func (p *projector) close() {
	p.dropPrefetch()
	if p.stager != nil {
		p.stager.Stop()
		p.stager, p.next = nil, nil
	}
	if p.boost != nil {
		p.boost.Stop()
		p.boost = nil
	}
	p.closeInserts()
}

// closeInserts closes the statements prepared on the projector's connection, on it.
func (p *projector) closeInserts() {
	if p.ins == nil {
		return
	}
	_ = p.sh.conn.do(func(*sqlitec.Conn) error {
		p.ins.close()
		return nil
	})
	p.ins = nil
}

// reset forgets every cached id after a failed transaction, whose inserts were rolled back.
func (p *projector) reset() {
	p.dropPrefetch()
	p.loaded, p.backlog = false, false
	p.resCache = map[[16]byte]int64{}
	p.scopeCache = map[[16]byte]int64{}
	p.metricCache = map[[16]byte]int64{}
	p.ins.reset()
}

// load reads the high-water mark and the next row ids from the database.
func (p *projector) load() error {
	next := func(table string, part schema.Parts) string {
		if p.sh.parts&part == 0 {
			return "1"
		}
		return "COALESCE((SELECT max(id) FROM " + table + "), 0) + 1"
	}
	q := `SELECT (SELECT raw_id FROM projection_state WHERE id = 1), ` + next("logs", schema.LogsMetrics) + ", " +
		next("spans", schema.Traces)
	for _, t := range schema.PointTables {
		if p.sh.parts&schema.LogsMetrics == 0 {
			q += ", 1"
		} else {
			q += ", COALESCE((SELECT max(rowid) FROM " + t + "), 0) + 1"
		}
	}
	err := p.sh.conn.do(func(c *sqlitec.Conn) error {
		st, err := c.Prepare(q)
		if err != nil {
			return err
		}
		defer st.Close()
		rows, err := st.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		if ok, err := rows.Next(); !ok {
			return cmp.Or(err, sql.ErrNoRows)
		}
		p.hwm, p.nextLogID, p.nextSpanID = rows.Int64(0), rows.Int64(1), rows.Int64(2)
		for i := range p.nextPoint {
			p.nextPoint[i] = rows.Int64(3 + i)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read projection state: %w", err)
	}
	p.loaded = true
	return nil
}

// readRaw loads the raw rows after raw id after into rows, up to limit rows of the shard's
// signals, stopping one such row after their weight (sliceWeight) passes maxRecords or their
// payload bytes pass maxBytes: a slice of 1000-record requests uses a handful of rows, and holding the other
// ~500 payloads in memory cost more than half the server's peak RSS under bulk load. The rows of
// other signals between them are read too, without their payloads, so that the slice's
// high-water mark passes them (at most skipFactor times limit rows in all). Only durable rows:
// with SyncFull a committed row is durable once the syncer has advanced LastRawID past it
// (walsync.go). The payloads are copied once, into arena when given (rawlog.Reader).
func (p *projector) readRaw(rows *[]rawlog.Row, arena *stage.ByteArena, after int64, limit int, maxRecords, maxBytes int64) error {
	lim := rawlog.Limits{Rows: limit, SkipFactor: skipFactor, Records: maxRecords, Bytes: maxBytes, RowWeight: sliceRowWeight}
	if arena != nil {
		arena.Reset()
		lim.Alloc = arena.Alloc
	}
	return p.sh.raw.Read(rows, after, lim)
}

// projectNext projects the next slice (projectSlice). CatchingUp (a prefetch is staging the
// slice after it, which happens only while ingest is idle) the slices run on the boost worker,
// at normal priority, one after another for as long as the catch-up lasts, with between after
// each one but the last, whose result it returns; otherwise the slice runs on the calling thread,
// at SCHED_IDLE. Handing each slice to the worker from the SCHED_IDLE thread left the worker
// parked ~7% of the time, waiting for that thread to be scheduled. A load that starts during a
// catch-up meets one slice at normal priority.
func (p *projector) projectNext(ctx context.Context, between func(n int)) (n int, err error) {
	if !p.catchingUp() {
		return p.projectSlice()
	}
	if p.boost == nil {
		p.boost = project.NewWorker(&p.s.stats.offThreadCPU)
	}
	p.boost.Run(func() {
		for {
			if n, err = p.projectSlice(); err != nil || n == 0 || ctx.Err() != nil || !p.catchingUp() {
				return
			}
			between(n)
		}
	})
	return n, err
}

// catchingUp reports whether the policy is in CatchingUp (without one: whether the last slice
// left a backlog while ingest was idle).
func (p *projector) catchingUp() bool {
	if p.policy == nil {
		return p.backlog
	}
	return p.policy.State() == project.CatchingUp
}

// takeSlice makes the next slice after p.hwm current (p.rows, p.stage, p.readAt): the prefetched
// one if there is one, else read and staged now. It returns how many rows the slice takes.
func (p *projector) takeSlice() (int, error) {
	if f := p.waitPrefetch(); f != nil {
		p.rows, f.rows = f.rows, p.rows
		p.stage, f.stage = f.stage, p.stage
		p.readAt = f.readAt
		clear(f.rows)
		return f.n, f.err
	}
	return p.fill(&p.rows, &p.stage, &p.readAt, p.hwm, p.nextLogID, p.nextSpanID, false)
}

// projectSlice projects the next slice of raw rows in one transaction and returns how many raw
// rows it projected (0 when caught up). While it commits, the slice after it is staged.
func (p *projector) projectSlice() (int, error) {
	if !p.loaded {
		if err := p.load(); err != nil {
			return 0, err
		}
	}
	n, err := p.takeSlice()
	if err != nil || n == 0 {
		return 0, err
	}
	last := p.rows[n-1].ID
	// Only while ingest is idle (catching up after a load): under a load the staged slice
	// would hold ~4 MB more live heap while ingest needs the memory, and the CPU.
	commits := p.s.raw.Commits()
	p.backlog = n < len(p.rows) && commits == p.commits && p.stage.huge == nil
	if p.policy != nil {
		p.policy.Sliced(n, len(p.rows), p.backlog)
	}
	if p.backlog {
		p.startPrefetch(last, p.stage.NextLogID, p.stage.NextSpanID)
	} else if f := p.next; f != nil && !f.running {
		// Nothing is staged next (caught up, or under load): let the stager's buffers go, a
		// whole slice of raw payloads and decoded records. Kept, they sat in the heap under the
		// 64 MiB soft limit and made the GC run through the queries that followed a catch-up
		// (the 161,000-span trace tree: ~40 against ~28 ms in scripts/bench-query.sh).
		f.rows, f.stage = nil, slice{}
	}
	p.commits = commits
	if err := p.commitStage(last); err != nil {
		p.dropPrefetch()
		return 0, err
	}
	p.hwm = last
	p.logFailed()
	if sliceHook != nil {
		sliceHook(p)
	}
	p.nextLogID, p.nextSpanID = p.stage.NextLogID, p.stage.NextSpanID
	for i, n := range p.stage.PointCounts() {
		p.nextPoint[i] += n
	}
	p.countPages()
	p.account(n)
	if n == len(p.rows) { // caught up: let the slice's bytes go
		p.stage.Payloads, p.stage.Strs, p.stage.Wire.Strs = stage.ByteArena{}, nil, nil
	}
	return n, nil
}

// countPages adds the page counters the projector's connection gathered since the last call
// (sqlite3_db_status, read and reset) to Stats. The connection is the pool's only one, idle
// between slices; the counters are a measurement, so a failure to read them is not an error of
// the slice and leaves them as they are.
func (p *projector) countPages() {
	c := &p.s.stats
	_ = p.sh.conn.do(func(conn *sqlitec.Conn) error {
		for _, m := range []struct {
			op  int
			sum *atomic.Uint64
		}{
			{sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, &c.pagesWritten},
			{sqlite3.SQLITE_DBSTATUS_CACHE_SPILL, &c.pagesSpilled},
			{sqlite3.SQLITE_DBSTATUS_CACHE_MISS, &c.pagesRead},
		} {
			if cur, _, err := conn.Status(m.op, true); err == nil && cur > 0 {
				m.sum.Add(uint64(cur))
			}
		}
		return nil
	})
}

// account updates Stats after a slice of n rows committed.
func (p *projector) account(n int) {
	c := &p.s.stats
	var lag int64
	var own bool
	for _, r := range p.rows[:n] {
		if p.sh.takes(r.Signal) {
			if !p.stage.isFailed(r.ID) {
				c.projected[r.Signal].Add(uint64(r.Records))
			}
			lag += r.Records
			own = true
		}
	}
	c.lagRecords.Add(-lag)
	if own {
		c.slices.Add(1)
	}
	oldest := &c.oldestUnproj[p.sh.index]
	switch cur := oldest.Load(); {
	case n < len(p.rows):
		oldest.Store(p.rows[n].Received)
	case p.s.raw.LastID() <= p.hwm:
		oldest.CompareAndSwap(cur, 0)
	default:
		// Every row read was projected and more were committed since: the oldest of those was
		// received about when the slice read (within a group commit of it), not when the lag
		// last began, which under a steady load that projection keeps up with would be long ago.
		oldest.CompareAndSwap(cur, p.readAt.UnixNano())
	}
	// Last: a reader that sees the projected raw id reach the last one sees every other count
	// of this slice too (tests wait on it, then read the slice count).
	c.projectedRawID[p.sh.index].Store(p.hwm)
	clear(p.rows)
}
