package store

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/project"
	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Size bound. With Config.MaxDiskBytes or MaxDiskShare set, the store keeps the data directory
// under the bound before the filesystem fills, because a full filesystem stalls everything that
// frees space: the projector cannot commit a slice, so no raw row becomes prunable and retention
// (which runs on the projector's connection) has nothing projected to delete. So, past the bound:
//   - Append answers ErrDiskFull (serve's 507) without writing: the rest of the filesystem is the
//     headroom in which the projector, raw pruning and retention free space;
//   - retention deletes the oldest projected rows whatever their age, and the writer prunes every
//     projected raw segment whose projection is durable (retention.go, rawlog's prune.go);
//   - the projected databases' WALs are checkpointed and truncated.
//
// And a projection slice takes at most a 64th of the bound (sliceBytes), so that it fits.
//
// And always under a bound: the WALs' automatic checkpoints come at an eighth of the bound (the
// projector's default, 256 MiB, is more than a small bound), and journal_size_limit truncates a
// WAL back to that size (as it does without a bound, walLimitPragmas) when SQLite restarts it.
//
// Append reads the size the retainer measured every boundEvery plus what the writer wrote
// since, so a fast writer cannot overshoot the bound by a period's worth of data. That size
// counts the projected files whole, free pages included: the raw log cannot reuse them, so while
// they are free, it has that much less room (the files' free pages are reused by their own
// rows; no VACUUM shrinks them), and the raw log's segments at their size on disk.

// boundEvery is the retainer's period while a size bound is set.
const boundEvery = 100 * time.Millisecond

// diskBound is the size bound's state: set by the retainer, read by Append.
type diskBound struct {
	limit    atomic.Int64 // the bound in bytes (0: none)
	measured atomic.Int64 // the used bytes the retainer measured last
	since    atomic.Int64 // bytes the raw log wrote since that measure (rawBound.Wrote)
}

// over reports whether the data directory is past its bound, counting what was committed since
// the last measure.
func (b *diskBound) over() bool {
	limit := b.limit.Load()
	return limit > 0 && b.measured.Load()+b.since.Load() > limit
}

// measure records a fresh measure of the used bytes.
func (b *diskBound) measure(limit, used int64) {
	b.limit.Store(limit)
	b.measured.Store(used)
	b.since.Store(0)
}

// sliceBytes bounds the raw payload bytes of a projection slice: project.MaxSliceBytes, or a 64th of the
// size bound if less, so that a slice's commit fits in the headroom left past the bound
// (a slice of random-text logs took about twice its raw bytes, text index included).
func (b *diskBound) sliceBytes() int64 {
	if limit := b.limit.Load(); limit > 0 {
		return max(64<<10, min(project.MaxSliceBytes, limit/64))
	}
	return project.MaxSliceBytes
}

// walPages returns the WAL automatic checkpoint threshold in pages of pageSize for a database
// whose default is def pages: an eighth of the size bound if that is less.
func (s *Store) walPages(def, pageSize int64) int64 {
	limit, err := s.maxDisk()
	if err != nil || limit == 0 {
		return def
	}
	return max(16, min(def, limit/8/max(pageSize, 512)))
}

// segmentBytes returns the raw log's segment size: seglog's default, or less if that is more
// than an eighth of the size bound or a 32nd of the filesystem. Segments take their whole size
// when created (fallocated or zero-filled, or a recycled spare) and are deleted whole, so on a small bound or disk large ones would hold most of
// it (serve on a 2 MiB filesystem could not create its first 64 MiB segment).
func (s *Store) segmentBytes() int64 {
	if s.cfg.rawSegmentBytes > 0 {
		return s.cfg.rawSegmentBytes
	}
	n := int64(seglog.DefaultSegmentBytes)
	if limit, err := s.maxDisk(); err == nil && limit > 0 {
		n = min(n, limit/8)
	}
	if size, err := fsSize(s.cfg.Dir); err == nil && size > 0 {
		n = min(n, size/32)
	}
	return max(64<<10, n)
}

// walLimitPragmas returns the pragma that bounds a projector's WAL file: journal_size_limit at
// the automatic checkpoint threshold of pages, or at maxRestingWAL if that is less. SQLite applies
// it on the first commit after a checkpoint lets the WAL restart, truncating the file back to the
// limit; without it the file keeps the size of its longest run between checkpoints for good. It
// changes no checkpoint, only the file's size once one has let the WAL restart.
func walLimitPragmas(pages, pageSize int64) []string {
	return []string{fmt.Sprintf("journal_size_limit(%d)", min(pages*max(pageSize, 512), maxRestingWAL))}
}

// maxRestingWAL is the most a projector's WAL file keeps after its WAL restarts. Serving a load
// with the prune watcher, the watcher's checkpoints restart the WAL long before the projector's
// 256 MiB threshold, and the file still grew 20 → 39 → 49 → 64 MB over 10 minutes of a short-
// retention soak (scripts/soak-serve.sh), each rare long run between two checkpoints (a reader
// pinning a snapshot, catch-up) setting its size for good: with two projected databases, up to
// 2 × 256 MiB of a data directory whose rows retention keeps to ~150 MB. 64 MiB holds the runs
// that soak saw without truncating and re-extending the file on every restart, and bounds the
// rest. Under a size bound the threshold, an eighth of the bound, is the limit when less.
const maxRestingWAL = 64 << 20

// truncateWAL checkpoints sh's WAL and truncates it to nothing, on the projector's connection
// between two slices. A reader holding part of the WAL makes it a partial checkpoint: the next
// one, a period later, goes further.
func (s *Store) truncateWAL(sh *shard) error {
	return sh.conn.Do(func(c *sqlitec.Conn) error {
		_, err := c.QueryInt64(`PRAGMA wal_checkpoint(TRUNCATE)`)
		return err
	})
}
