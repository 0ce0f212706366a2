package store

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Size bound. With Config.MaxDiskBytes or MaxDiskShare set, the store keeps the data directory
// under the bound before the filesystem fills, because a full filesystem stalls everything that
// frees space: the projector cannot commit a slice, so no raw row becomes prunable and retention
// (which runs on the projector's connection) has nothing projected to delete. So, past the bound:
//   - Append answers ErrDiskFull (serve's 507) without writing: the rest of the filesystem is the
//     headroom in which the projector, raw pruning and retention free space;
//   - retention deletes the oldest projected rows whatever their age, and the writer prunes every
//     projected raw row whose projection is durable (retention.go, prune.go);
//   - the projected databases' WALs are checkpointed and truncated.
//
// And a projection slice takes at most a 64th of the bound (sliceBytes), so that it fits.
//
// And always under a bound: the WALs' automatic checkpoints come at an eighth of the bound (the
// projector's default, 256 MiB, is more than a small bound), and journal_size_limit truncates a
// WAL back to that size when SQLite restarts it, where the file would otherwise keep the size of
// its longest run between checkpoints.
//
// Append reads the size the retainer measured every boundEvery plus what the writer committed
// since, so a fast writer cannot overshoot the bound by a period's worth of data. That size
// counts the projected files whole, free pages included: raw.db cannot reuse them, so while
// they are free, raw.db has that much less room (the files' free pages are reused by their own
// rows; no VACUUM shrinks them).

// boundEvery is the retainer's period while a size bound is set.
const boundEvery = 100 * time.Millisecond

// diskBound is the size bound's state: set by the retainer, read by Append.
type diskBound struct {
	limit    atomic.Int64 // the bound in bytes (0: none)
	measured atomic.Int64 // the used bytes the retainer measured last
	since    atomic.Int64 // payload bytes committed since that measure
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

// committed counts a committed group toward the next measure: its payloads and two pages of
// WAL frames (a leaf and its parent), for a group of one small request writes a whole page.
func (b *diskBound) committed(batch []*request) {
	n := int64(2 * 8192)
	for _, r := range batch {
		n += int64(len(r.payload))
	}
	b.since.Add(n)
}

// sliceBytes bounds the raw payload bytes of a projection slice: maxSliceBytes, or a 64th of the
// size bound if less, so that a slice's commit fits in the headroom left past the bound
// (a slice of random-text logs took about twice its raw bytes, text index included).
func (b *diskBound) sliceBytes() int64 {
	if limit := b.limit.Load(); limit > 0 {
		return max(64<<10, min(maxSliceBytes, limit/64))
	}
	return maxSliceBytes
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

// rawWALPragmas returns commonPragmas and those that bound raw.db's WAL: SQLite's default
// threshold of 1,000 pages (raw.db's are 8 KiB), or less under a size bound.
func (s *Store) rawWALPragmas() []string {
	pages := s.walPages(1000, 8192)
	ps := append([]string(nil), commonPragmas...)
	if pages == 1000 {
		return ps // no bound: SQLite's defaults, as without one
	}
	return append(append(ps, fmt.Sprintf("wal_autocheckpoint(%d)", pages)), s.walLimitPragmas(pages, 8192)...)
}

// walLimitPragmas returns the pragmas that bound the WAL files under a size bound: none without
// one.
func (s *Store) walLimitPragmas(pages, pageSize int64) []string {
	limit, err := s.maxDisk()
	if err != nil || limit == 0 {
		return nil
	}
	return []string{fmt.Sprintf("journal_size_limit(%d)", pages*max(pageSize, 512))}
}

// truncateWAL checkpoints sh's WAL and truncates it to nothing, on the projector's connection
// between two slices. A reader holding part of the WAL makes it a partial checkpoint: the next
// one, a period later, goes further.
func (s *Store) truncateWAL(sh *shard) error {
	return sh.conn.do(func(c *sqlitec.Conn) error {
		_, err := c.QueryInt64(`PRAGMA wal_checkpoint(TRUNCATE)`)
		return err
	})
}
