package rawlog

import (
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// Count counts one signal's appends: requests, their records and payload bytes.
type Count struct{ Requests, Records, Bytes uint64 }

// Stats is a snapshot of the log's counters.
type Stats struct {
	// Stored counts the appends stored durably since Open (Append returned nil), by signal
	// value; Total counts them since the directory was created (totals.go).
	Stored, Total [signal.Traces + 1]Count

	// QueueRequests and QueueBytes are the appends queued or being written now;
	// MaxQueueRequests and MaxQueueBytes are the limits beyond which Append returns ErrQueueFull.
	QueueRequests, QueueBytes, MaxQueueRequests, MaxQueueBytes int64
	// QueueFull counts appends rejected with ErrQueueFull; Commits the writer's group writes;
	// Syncs the fsyncs that made groups durable (SyncFull; one may cover more than one group);
	// CommitErrors the group writes and the fsyncs that failed (their callers got the error).
	QueueFull, Commits, Syncs, CommitErrors uint64
	// WriterBusy is the time the writer spent writing and answering since Open (the rest it
	// waited for appends).
	WriterBusy time.Duration
	// LastID is the id of the newest durable row (per Config.Sync): with SyncFull a written
	// row counts from the fsync that made it durable.
	LastID int64
	// DiskBytes is the segment files' size, spares included; Spares counts the spare files kept
	// for the next rolls (seglog).
	DiskBytes int64
	Spares    int
}

// counters are the live atomics behind Stats.
type counters struct {
	// Indexed by the signal value, as seglog.Counts is.
	requests, records, bytes         [signal.Traces + 1]atomic.Uint64
	queueFull, commits, commitErrors atomic.Uint64
	writerBusy                       atomic.Int64 // nanoseconds
	lastID                           atomic.Int64
	base                             [signal.Traces + 1]Count // the durable totals read at Open
}

// committed counts a durably written batch and returns it as a Group (LastID unset).
func (c *counters) committed(batch []*request) Group {
	g := Group{Received: batch[0].received}
	for _, r := range batch {
		c.requests[r.sig].Add(1)
		c.records[r.sig].Add(uint64(r.records))
		c.bytes[r.sig].Add(uint64(len(r.payload)))
		g.Records += int64(r.records)
	}
	return g
}

// Commits returns the group writes since Open (Stats.Commits) without the rest of Stats.
func (l *Log) Commits() uint64 { return l.stats.commits.Load() }

// LastID returns the id of the newest durable row (Stats.LastID) without the rest of Stats.
func (l *Log) LastID() int64 { return l.stats.lastID.Load() }

// Stats returns a snapshot of the counters.
func (l *Log) Stats() Stats {
	c := &l.stats
	seg := l.seg.Stats()
	st := Stats{
		QueueRequests:    l.q.reqs.Load(),
		QueueBytes:       l.q.bytes.Load(),
		MaxQueueRequests: int64(l.q.maxReqs),
		MaxQueueBytes:    l.q.maxBytes,
		QueueFull:        c.queueFull.Load(),
		Commits:          c.commits.Load(),
		Syncs:            uint64(seg.Syncs),
		CommitErrors:     c.commitErrors.Load(),
		WriterBusy:       time.Duration(c.writerBusy.Load()),
		LastID:           c.lastID.Load(),
		DiskBytes:        seg.DiskBytes,
		Spares:           seg.Spares,
	}
	for i := range st.Stored {
		n := Count{Requests: c.requests[i].Load(), Records: c.records[i].Load(), Bytes: c.bytes[i].Load()}
		st.Stored[i] = n
		b := c.base[i]
		st.Total[i] = Count{Requests: b.Requests + n.Requests, Records: b.Records + n.Records, Bytes: b.Bytes + n.Bytes}
	}
	return st
}
