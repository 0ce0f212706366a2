package store

import (
	"context"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// ScanRaw calls fn with each durable raw row still in the raw log, in id order, until fn returns
// an error, which ScanRaw returns (rawlog.Log.Scan).
func (s *Store) ScanRaw(fn func(rawlog.Row) error) error { return s.raw.Scan(fn) }

// HoldWriter makes the raw log's writer wait before its next group write until release is
// called (rawlog.Log.HoldWriter): tests fill the queue with it.
func (s *Store) HoldWriter() (release func()) { return s.raw.HoldWriter() }

// RawSegments lists the raw log's segment files, oldest first (the last is the active one).
func (s *Store) RawSegments() []seglog.SegmentInfo { return s.raw.Segments() }

// Failed returns the error of a failed fsync of the raw log (wrapping ErrSyncFailed) once one
// has failed, or of a write that left the log's tail unknown: from then on every append fails,
// and the store must be closed and reopened. It returns nil otherwise.
func (s *Store) Failed() error { return s.raw.Failed() }

// Append queues one OTLP Export*ServiceRequest in protobuf encoding and blocks until the group
// holding it is durable (per Config.Sync) or fails (rawlog.Log.Append, which says what each
// error means). records is the caller's count of records in the payload (log records, spans or
// data points); it feeds Stats. Past the size bound it returns ErrDiskFull without writing.
func (s *Store) Append(ctx context.Context, sig signal.Signal, payload []byte, records int) error {
	return s.raw.Append(ctx, sig, payload, records)
}

// rawDurable is the raw log's OnDurable: it counts the group's records into the projection
// lag and lets the projectors read up to it.
func (s *Store) rawDurable(g rawlog.Group) {
	c := &s.stats
	c.lagRecords.Add(g.Records)
	// The first group after catching up becomes the oldest unprojected work.
	for i := range c.shards {
		c.oldestUnproj[i].CompareAndSwap(0, g.Received)
	}
	s.wakeProjector()
}

// rawBound is the size bound as the raw log sees it (diskbound.go).
type rawBound struct{ s *Store }

// Over reports whether Append is to refuse: the directory is past its bound.
func (b rawBound) Over() bool { return b.s.bound.over() }

// Wrote counts a written group's bytes toward the next measure.
func (b rawBound) Wrote(n int64) { b.s.bound.since.Add(n) }

// PruneNow reports whether the used bytes are past the bound: projected raw segments go at
// once, whatever their age.
func (b rawBound) PruneNow() bool { return b.s.retain.overDisk.Load() }
