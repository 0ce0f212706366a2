package project

import (
	"log/slog"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
)

// Deps are what a projector takes from the store that runs it (internal/store): the database it
// projects into, the raw log it reads, the counters behind the store's Stats, and the hooks the
// store's size bound and retention need. Every field is required unless it says otherwise.
type Deps struct {
	// Name names the database in logs ("telemetry" or "traces").
	Name string
	// Parts are the tables the database holds.
	Parts schema.Parts
	// Filter says which raw rows the projector takes (the others it passes by).
	Filter rawlog.Filter
	// Conn is the projector's connection to the database. The store's retention takes it
	// between two slices (Conn.Do), so a retention step waits for a slice at most.
	Conn *Conn
	// Raw reads the raw log's durable rows.
	Raw *rawlog.Reader
	// Wake is nudged after each group commit of the raw log.
	Wake <-chan struct{}
	// Sweep is the retention's sweep of unused ids of this database, which the projector's id
	// caches follow; nil when nothing deletes ids.
	Sweep IDSweep
	// Policy decides when the projector runs (NewPolicy); one per projector.
	Policy *Policy
	// Counters are the store's counters the projector updates.
	Counters Counters
	// Marks is the raw log's write side as the projector watches it (a *rawlog.Log).
	Marks RawMarks
	// SliceRows bounds the raw rows of the projector's signals a slice takes.
	SliceRows int
	// SliceBytes returns the bound on a slice's raw payload bytes (MaxSliceBytes, or less under
	// the store's size bound); it is read for every slice.
	SliceBytes func() int64
	// Projected is called after each slice that projected rows.
	Projected func()
	// Logger receives the failed slices and the unprojectable rows.
	Logger *slog.Logger
	// AfterSlice, if set, is called after each slice that projected rows, once it committed,
	// with the policy's state, on the thread that ran the slice (the catch-up Worker's while the
	// projector's goroutine waits for it): tests watch the policy through it.
	AfterSlice func(State)
}

// IDSweep is the store's retention sweep of the resource, scope and metric ids no row names any
// more. The projector calls both methods holding the connection (Conn.Do), before it writes a
// slice's rows.
type IDSweep interface {
	// Drop removes from the projector's id caches (by hash) the ids the sweep deleted.
	Drop(resources, scopes, metrics map[[16]byte]int64)
	// Use notes the ids the slice names, so that the sweep under way keeps them.
	Use(resources, scopes, metrics []int64)
}

// RawMarks is what a projector reads of the raw log's writer: Commits counts its group commits
// (one during a slice means ingest is not idle) and LastID is its durable mark.
type RawMarks interface {
	Commits() uint64
	LastID() int64
}

// Counters point at the atomics behind the store's Stats that a projector reads and updates.
// The store's writer and Stats share them; the projectors of a store share all but the
// per-database ones.
type Counters struct {
	// Projected counts projected records by signal value (0 and invalid values included: a
	// raw row read back from disk may hold them).
	Projected *[signal.Traces + 1]atomic.Uint64
	// LagRecords is the records appended and not projected yet.
	LagRecords *atomic.Int64
	// OldestUnproj is the receive time of this database's oldest raw row not projected (0 if
	// none); ProjectedRawID its high-water mark.
	OldestUnproj, ProjectedRawID *atomic.Int64
	// Slices and Errors count committed and failed slices.
	Slices, Errors *atomic.Uint64
	// Prefetches counts the slices staged while one committed.
	Prefetches *atomic.Uint64
	// PagesWritten, PagesSpilled and PagesRead are the connection's page counters.
	PagesWritten, PagesSpilled, PagesRead *atomic.Uint64
	// Unprojectable and UnprojectableRecords count the raw rows passed by and their records.
	Unprojectable, UnprojectableRecords *atomic.Uint64
	// OffThreadCPU is the thread CPU the projector's Workers used, in nanoseconds.
	OffThreadCPU *atomic.Int64
	// DeferredNanos is the time spent Deferring; Deferring says whether it does now.
	DeferredNanos *atomic.Int64
	Deferring     *atomic.Bool
}
