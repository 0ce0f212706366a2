package seglog

import "os"

// Page cache. Durable records are read once, by readers that follow the writer closely (serve's
// projectors) or that catch up later from disk, and never again but by a restart's recovery.
// So the log gives their page cache back: the syncer drops a segment's pages once they are
// durable and more than Config.CacheBytes behind the newest record (and a sealed segment's
// whole file once its descriptor is retired), and a Reader drops what it read below that mark
// as soon as it has copied it into its own buffer.
//
// The reason is cost, not only memory. A page the kernel has to find for new file data can cost
// far more than one freed a moment ago: on a KVM guest with free page reporting, memory it has
// not touched lately faults in from the host at first touch. With every page kept, the zeros
// written ahead of the records in a new segment (zeroAhead), the first touch of each page, were
// 53% of serve's CPU at 1,000-record requests, the records' own writes 1.8%
// (docs/design/seglog.md).

// DefaultCacheBytes is how much of the newest durable records stays in the page cache for
// readers that follow the writer. serve at 100-record requests (scripts/bench-bulk.sh, serve
// alone, 3 alternated rounds): 91-96 µs of CPU a request keeping 16 MiB, 84-87 keeping 256 MiB,
// 85-89 keeping everything; at 1,000 records 16 and 256 MiB were alike (414-462 µs).
const DefaultCacheBytes = 256 << 20

// pageSize is the page size the Reader rounds its drops to: the smallest Linux uses, so a
// drop never misses a whole page of what was read.
const pageSize = 4096

// releaseStep is the least the syncer releases at a time: one fadvise a MiB written at most.
const releaseStep = 1 << 20

// release drops the page cache of the active segment seg (open as f) up to CacheBytes before
// end, a durable offset. It runs on the syncer after each fdatasync; y.relFirst and y.relOff
// are its own.
func (y *syncer) release(f *os.File, seg *segment, end int64) {
	keep := y.l.cfg.CacheBytes
	if keep < 0 {
		return
	}
	if seg.first != y.relFirst {
		y.relFirst, y.relOff = seg.first, 0
	}
	to := end - keep
	if to-y.relOff < releaseStep {
		return
	}
	y.l.mu.Lock()
	seg.released = to
	y.l.mu.Unlock()
	y.relOff = dropBehind(f, y.relOff, to) // only an optimisation: a failure costs memory, not data
}

// dropBehind drops f's cached pages between from and to, and returns where the next drop of a
// range after to should start: a folio across to stays (the kernel drops only those wholly
// inside), so the next drop covers it again. Folios are at most 2 MiB (a PMD) here.
func dropBehind(f *os.File, from, to int64) int64 {
	dropCache(f, from, to)
	return max(from, to-maxFolio)
}

// maxFolio bounds the page cache's folio size: a PMD on x86-64 and arm64 with 4 KiB pages.
const maxFolio = 2 << 20

// releaseSealed drops the page cache of a sealed segment whose descriptor the syncer is about
// to close; the roll fdatasynced it, so every page is clean.
func (y *syncer) releaseSealed(r retiredFile) {
	if y.l.cfg.CacheBytes < 0 {
		return
	}
	y.l.mu.Lock()
	r.seg.released = r.seg.end
	y.l.mu.Unlock()
	dropCache(r.f, 0, 0)
}

// retiredFile is a sealed segment's descriptor handed to the syncer to close.
type retiredFile struct {
	f   *os.File
	seg *segment
}
