package project

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for schema.Apply

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// testCounters are the atomics a test projector's Counters point at.
type testCounters struct {
	projected                                                    [signal.Traces + 1]atomic.Uint64
	lagRecords, lastRawID, oldest, projectedRawID, cpu, deferred atomic.Int64
	commits, slices, errors, prefetches, written, spilled, read  atomic.Uint64
	unprojectable, unprojectableRecords                          atomic.Uint64
	deferring                                                    atomic.Bool
}

// Commits and LastID make the counters the test projector's RawMarks.
func (c *testCounters) Commits() uint64 { return c.commits.Load() }
func (c *testCounters) LastID() int64   { return c.lastRawID.Load() }

func (c *testCounters) counters() Counters {
	return Counters{
		Projected: &c.projected, LagRecords: &c.lagRecords,
		OldestUnproj: &c.oldest, ProjectedRawID: &c.projectedRawID, Slices: &c.slices, Errors: &c.errors,
		Prefetches: &c.prefetches, PagesWritten: &c.written, PagesSpilled: &c.spilled, PagesRead: &c.read,
		Unprojectable: &c.unprojectable, UnprojectableRecords: &c.unprojectableRecords,
		OffThreadCPU: &c.cpu, DeferredNanos: &c.deferred, Deferring: &c.deferring,
	}
}

// testProjection is a raw log and a projected database in t.TempDir(), as a store lays them out
// (page size, the projector connection's page cache), and a projector of every signal between
// them, driven slice by slice by the test (no loop, no policy: a slice that leaves rows behind
// is a catch-up, and prefetches the next).
type testProjection struct {
	log *seglog.Log
	c   *testCounters
	d   Deps       // without a Policy, Wake or AfterSlice
	p   *projector // on d, for the tests that drive slices themselves
}

// newTestProjection opens the raw log and the database, with slices of at most sliceRows rows.
func newTestProjection(t *testing.T, sliceRows int) *testProjection {
	t.Helper()
	dir := t.TempDir()
	log, err := seglog.Open(seglog.Config{Dir: filepath.Join(dir, "raw"), Sync: seglog.SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "telemetry.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA page_size = 8192; PRAGMA journal_mode = wal"); err != nil {
		t.Fatal(err)
	}
	parts := schema.LogsMetrics | schema.Traces
	if err := schema.Apply(context.Background(), db, parts); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := OpenConn(path, "synchronous(normal)", "cache_size(-2048)", "cache_spill(false)")
	if err != nil {
		t.Fatal(err)
	}
	tp := &testProjection{log: log, c: &testCounters{}}
	raw := rawlog.OpenReader(log, rawlog.Filter{})
	tp.d = Deps{
		Name: "telemetry", Parts: parts, Conn: conn, Raw: raw, Marks: tp.c, Counters: tp.c.counters(),
		SliceRows: sliceRows, SliceBytes: func() int64 { return MaxSliceBytes }, Projected: func() {},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	tp.p = newProjector(tp.d)
	t.Cleanup(func() {
		tp.p.close()
		for _, err := range []error{raw.Close(), conn.Close(), log.Close()} {
			if err != nil {
				t.Error(err)
			}
		}
	})
	return tp
}

// append writes one raw row of sig holding records records. Only the test's goroutine appends.
func (tp *testProjection) append(t *testing.T, sig signal.Signal, records int, payload []byte) {
	t.Helper()
	_, last, err := tp.log.Write([]seglog.Entry{{Signal: sig, Records: records, Received: time.Now().UnixNano(), Payload: payload}})
	if err != nil {
		t.Fatal(err)
	}
	tp.c.lastRawID.Store(last)
	tp.c.lagRecords.Add(int64(records))
}

// appendLogs appends ld as one raw row.
func (tp *testProjection) appendLogs(t *testing.T, svc, prefix string, n int) {
	t.Helper()
	b, err := logsMarshaler.MarshalLogs(makeLogs(svc, prefix, n))
	if err != nil {
		t.Fatal(err)
	}
	tp.append(t, signal.Logs, n, b)
}

// projectAll projects slices until one finds nothing, and returns how many projected rows.
func (tp *testProjection) projectAll(t *testing.T) (slices int) {
	t.Helper()
	for {
		n, err := tp.p.projectSlice()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return slices
		}
		slices++
	}
}
