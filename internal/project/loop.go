package project

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

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
// record, which Deps.SliceRows (the store's 2,048) bounds alone, paid a slice's fixed costs (the
// commit, the FTS5 segment flush and merge, the summaries, the newest leaves written again) over
// 512 records; they now make slices of 1,170. Rows of ten records still make slices of 512 rows
// (5,120 records, whose memory the 100 MB budget was measured with: 8,192 records a slice added
// ~12 MB of peak RSS), and rows of 100 records slices of 77 (81 without the weight).
const sliceRowWeight = 6

// skipFactor bounds the rows of other signals a projector of some signals reads past in a slice:
// at most skipFactor times its slice's rows in all (readRaw).
const skipFactor = 8

// MaxSliceBytes bounds the raw payload bytes one slice takes (beyond the first raw row), so that
// its memory is bounded too: the payloads read and the records decoded from them. Without it a
// slice of 512 requests of 16 records with 4 MiB bodies would hold 2 GiB. Slices of the load's
// requests (a few KiB each) never reach it. A store under a size bound passes less
// (Deps.SliceBytes).
const MaxSliceBytes = 8 << 20

// sliceWeight is what r counts toward maxSliceRecords: its records and sliceRowWeight.
func sliceWeight(r *rawlog.Row) int64 { return r.Records + sliceRowWeight }

// Run projects raw rows into d's database slice by slice until ctx is cancelled, on a thread of
// its own under SCHED_IDLE (RunLowered). A failed slice is rolled back and retried with backoff;
// the slice in progress when ctx ends is finished.
func Run(ctx context.Context, d Deps) {
	RunLowered(func(err error) {
		d.Logger.Warn("store: projector runs at normal priority", "db", d.Name, "err", err)
	}, func() { run(ctx, d) })
}

// run is a projector's loop (Run); d.Policy decides when it runs.
func run(ctx context.Context, d Deps) {
	p := newProjector(d)
	defer p.close()
	pol, c := p.policy, &p.d.Counters
	backoff := 50 * time.Millisecond
	var lastSlice time.Time // start of the last slice that projected rows
	for ctx.Err() == nil {
		if !pol.Gather(ctx, lastSlice) {
			return
		}
		if pol.Check() {
			c.Deferring.Store(true)
			ok := pol.Wait(ctx, func(d time.Duration) { c.DeferredNanos.Add(int64(d)) })
			c.Deferring.Store(false)
			if !ok {
				return
			}
		}
		start := pol.Now()
		n, err := p.projectNext(ctx, func(int) {
			// A slice of a catch-up, which ran on the boost worker; the last one returns.
			lastSlice = start
			d.Projected()
			start = pol.Now()
		})
		if err != nil {
			c.Errors.Add(1)
			d.Logger.Warn("store: projection slice failed; retrying", "db", d.Name, "after_raw_id", p.hwm, "err", err)
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
			d.Projected()
			continue
		}
		pol.Sliced(0, 0, true) // nothing to project: Idle
		select {
		case <-ctx.Done():
		case <-d.Wake:
		}
	}
}

// projector is the state owned by a projector goroutine: the projection of raw rows into one
// database (Deps).
type projector struct {
	d Deps

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

	next    *prefetch // the next slice, staged while the current one commits
	commits uint64    // the writer's commits when the last slice was taken
	backlog bool      // the last slice left raw rows behind while ingest was idle: catching up
	policy  *Policy   // when the projector runs; nil in tests of slices alone
	stager  *Worker   // stages next (startPrefetch)
	boost   *Worker   // projects slices while catching up (projectNext)
	// noWindow is a raw row whose windows failed: staged whole on the retry (window.go).
	noWindow int64
}

func newProjector(d Deps) *projector {
	p := &projector{d: d, policy: d.Policy}
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
	_ = p.d.Conn.Do(func(*sqlitec.Conn) error {
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
		if p.d.Parts&part == 0 {
			return "1"
		}
		return "COALESCE((SELECT max(id) FROM " + table + "), 0) + 1"
	}
	q := `SELECT (SELECT raw_id FROM projection_state WHERE id = 1), ` + next("logs", schema.LogsMetrics) + ", " +
		next("spans", schema.Traces)
	for _, t := range schema.PointTables {
		if p.d.Parts&schema.LogsMetrics == 0 {
			q += ", 1"
		} else {
			q += ", COALESCE((SELECT max(rowid) FROM " + t + "), 0) + 1"
		}
	}
	read := false
	err := p.d.Conn.Do(func(c *sqlitec.Conn) error {
		return c.QueryRows(q, func(rows *sqlitec.Rows) error {
			p.hwm, p.nextLogID, p.nextSpanID = rows.Int64(0), rows.Int64(1), rows.Int64(2)
			for i := range p.nextPoint {
				p.nextPoint[i] = rows.Int64(3 + i)
			}
			read = true
			return nil
		})
	})
	if err == nil && !read {
		err = sql.ErrNoRows
	}
	if err != nil {
		return fmt.Errorf("read projection state: %w", err)
	}
	p.loaded = true
	return nil
}

// readRaw loads the raw rows after raw id after into rows, up to limit rows of the signals
// d.Filter takes, stopping one such row after their weight (sliceWeight) passes maxRecords or their
// payload bytes pass maxBytes: a slice of 1000-record requests uses a handful of rows, and holding the other
// ~500 payloads in memory cost more than half the server's peak RSS under bulk load. The rows of
// other signals between them are read too, without their payloads, so that the slice's
// high-water mark passes them (at most skipFactor times limit rows in all). Only durable rows:
// with the store's SyncFull a committed row is durable once its WAL syncer has advanced
// LastRawID past it. The payloads are copied once, into arena when given (rawlog.Reader).
func (p *projector) readRaw(rows *[]rawlog.Row, arena *stage.ByteArena, after int64, limit int, maxRecords, maxBytes int64) error {
	lim := rawlog.Limits{Rows: limit, SkipFactor: skipFactor, Records: maxRecords, Bytes: maxBytes, RowWeight: sliceRowWeight}
	if arena != nil {
		arena.Reset()
		lim.Alloc = arena.Alloc
	}
	return p.d.Raw.Read(rows, after, lim)
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
		p.boost = NewWorker(p.d.Counters.OffThreadCPU)
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
	return p.policy.State() == CatchingUp
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
	commits := p.d.Marks.Commits()
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
	if p.d.AfterSlice != nil {
		p.d.AfterSlice(p.policy.State())
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
// (sqlite3_db_status, read and reset) to the counters. The connection is the pool's only one, idle
// between slices; the counters are a measurement, so a failure to read them is not an error of
// the slice and leaves them as they are.
func (p *projector) countPages() {
	c := &p.d.Counters
	_ = p.d.Conn.Do(func(conn *sqlitec.Conn) error {
		for _, m := range []struct {
			op  int
			sum *atomic.Uint64
		}{
			{sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, c.PagesWritten},
			{sqlite3.SQLITE_DBSTATUS_CACHE_SPILL, c.PagesSpilled},
			{sqlite3.SQLITE_DBSTATUS_CACHE_MISS, c.PagesRead},
		} {
			if cur, _, err := conn.Status(m.op, true); err == nil && cur > 0 {
				m.sum.Add(uint64(cur))
			}
		}
		return nil
	})
}

// account updates the counters after a slice of n rows committed.
func (p *projector) account(n int) {
	c := &p.d.Counters
	var lag int64
	var own bool
	for _, r := range p.rows[:n] {
		if p.d.Filter.Takes(r.Signal) {
			if !p.stage.isFailed(r.ID) {
				c.Projected[r.Signal].Add(uint64(r.Records))
			}
			lag += r.Records
			own = true
		}
	}
	c.LagRecords.Add(-lag)
	if own {
		c.Slices.Add(1)
	}
	oldest := c.OldestUnproj
	switch cur := oldest.Load(); {
	case n < len(p.rows):
		oldest.Store(p.rows[n].Received)
	case p.d.Marks.LastID() <= p.hwm:
		oldest.CompareAndSwap(cur, 0)
	default:
		// Every row read was projected and more were committed since: the oldest of those was
		// received about when the slice read (within a group commit of it), not when the lag
		// last began, which under a steady load that projection keeps up with would be long ago.
		oldest.CompareAndSwap(cur, p.readAt.UnixNano())
	}
	// Last: a reader that sees the projected raw id reach the last one sees every other count
	// of this slice too (tests wait on it, then read the slice count).
	c.ProjectedRawID.Store(p.hwm)
	clear(p.rows)
}
