package seglog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write appends batch as consecutive records with one positioned vectored write (pwritev on
// Linux) straight from the entries' payloads, and returns the ids it assigned, first through
// last. Only one goroutine may call Write. The records are readable once durable: with SyncFull
// after the syncer's next fdatasync (WaitDurable), otherwise at once.
//
// Write returns ErrClosed, the sticky ErrSyncFailed, or a wrapped ErrDiskFull when the segment's
// filesystem is full: the partial write is cut back off, no id is used, and a later Write succeeds
// once there is room. Any other write error is made sticky like a failed fsync, since the file's
// tail is then unknown.
func (l *Log) Write(batch []Entry) (first, last int64, err error) {
	if len(batch) == 0 {
		return 0, 0, nil
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	closed, serr, seg, next := l.closed, l.err, l.segs[len(l.segs)-1], l.next
	l.mu.Unlock()
	switch {
	case closed:
		return 0, 0, ErrClosed
	case serr != nil:
		return 0, 0, serr
	}
	if seg.end >= l.cfg.SegmentBytes && seg.last >= seg.first {
		if seg, err = l.roll(next); err != nil {
			return 0, 0, err
		}
	}
	if need := len(batch) * headerSize; cap(l.hdrs) < need {
		l.hdrs = make([]byte, need)
	}
	l.iov.reset()
	var payload int64
	for i := range batch {
		h := l.hdrs[i*headerSize : (i+1)*headerSize]
		putHeader(h, next+int64(i), &batch[i])
		l.iov.add(h)
		l.iov.add(batch[i].Payload)
		payload += int64(len(batch[i].Payload))
	}
	l.iov.add(endMark[:])
	off := seg.end
	if err := writeVec(l.cur, &l.iov, off); err != nil {
		return 0, 0, l.writeFailed(seg, off, err)
	}
	l.written(seg, batch, next, off)
	l.zeroAhead(seg)
	last = next + int64(len(batch)) - 1
	l.stats.requests.Add(int64(len(batch)))
	l.stats.bytes.Add(payload)
	if l.sy != nil {
		poke(l.sy.wake)
	} else {
		l.durable.Store(last)
	}
	return next, last, nil
}

// written publishes batch, written at off in seg, to readers and the syncer, and indexes it.
func (l *Log) written(seg *segment, batch []Entry, first, off int64) {
	var records int64
	l.mu.Lock()
	for i := range batch {
		if l.idxBytes >= l.cfg.IndexBytes || l.idxRecs >= l.cfg.IndexRecords {
			seg.index = append(seg.index, indexEntry{id: first + int64(i), off: off})
			l.idxBytes, l.idxRecs = 0, 0
		}
		n := int64(headerSize + len(batch[i].Payload))
		off += n
		l.idxBytes += n
		l.idxRecs++
		records += int64(batch[i].Records)
		seg.counts.add(batch[i].Signal, int64(batch[i].Records), int64(len(batch[i].Payload)))
	}
	seg.end = off
	seg.size = max(seg.size, off+headerSize) // endMark follows
	seg.last = first + int64(len(batch)) - 1
	seg.lastReceived = batch[len(batch)-1].Received
	l.next = seg.last + 1
	l.mu.Unlock()
	l.stats.records.Add(records)
}

// writeFailed cuts a failed write back off seg and classifies err.
func (l *Log) writeFailed(seg *segment, off int64, err error) error {
	err = fmt.Errorf("seglog: write %s at %d: %w", seg.path, off, err)
	if terr := l.cur.Truncate(off); terr != nil {
		return l.fail(fmt.Errorf("%w; cutting it back: %w", err, terr))
	}
	if isNoSpace(err) {
		// Give the spares' room back: the rest of the directory (a projection that frees this
		// log's segments once it commits) may need it more than the next rolls do.
		if _, rerr := l.ReleaseSpares(); rerr != nil {
			l.cfg.Logger.Warn("seglog: release spare segments", "err", rerr)
		}
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return l.fail(err)
}

// fail makes err sticky: every later Write and WaitDurable returns it.
func (l *Log) fail(err error) error {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	err = l.err
	l.mu.Unlock()
	if l.sy != nil {
		l.sy.broadcast()
	}
	return err
}

// roll seals the active segment and starts one whose first id is first. Below SyncOff the sealed
// segment is fdatasynced first, so only the last segment can have a torn tail after a crash
// (recover.go), and the directory is fsynced so the new name survives before any record in it is
// durable. It is called with wmu held.
func (l *Log) roll(first int64) (*segment, error) {
	// Cut the allocated rest off, so that a sealed segment ends at its last record and a zero
	// header inside one is corruption (recover.go).
	l.mu.Lock()
	sealed := l.segs[len(l.segs)-1]
	end := sealed.end
	l.mu.Unlock()
	if err := l.cur.Truncate(end); err != nil {
		return nil, l.fail(fmt.Errorf("seglog: cut sealed segment %s to %d: %w", sealed.path, end, err))
	}
	l.mu.Lock()
	sealed.size = end
	l.mu.Unlock()
	if l.cfg.Sync != SyncOff {
		if err := l.syncFile(l.cur); err != nil {
			return nil, l.fail(err)
		}
	}
	seg, f, err := l.takeSpare(first)
	if err == nil && seg == nil {
		seg, f, err = createSegment(l.cfg, first)
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	old := l.cur
	l.cur = f
	l.segs = append(l.segs, seg)
	l.idxBytes, l.idxRecs = 0, 0
	l.mu.Unlock()
	if l.sy != nil {
		l.sy.retire(old, sealed) // the syncer may be syncing it now
	} else if err := old.Close(); err != nil {
		return nil, fmt.Errorf("seglog: close sealed segment: %w", err)
	}
	return seg, nil
}

// endMark follows every group written: an all-zero header, so that the records on disk end at
// one even in a recycled segment, whose stale bytes follow (spare.go), and recovery tells a
// clean end from a torn tail.
var endMark [headerSize]byte

// createSegment creates the file of a segment whose first id is first, with its file header,
// allocated to cfg.SegmentBytes with fallocate (zero-filled where the filesystem cannot), and
// (below SyncOff) fsyncs it and the directory. A roll creates one only when no spare is left
// (spare.go): on a new log, until pruning starts. fallocate writes nothing, where a zero-fill
// writes and fsyncs 64 MiB on the writer's path at each roll (BenchmarkAppend: the
// "zero-filled" rows' max-write-ms); its unwritten extents cost a journal commit at the
// fdatasync after they are first written, which recycled spares avoid.
func createSegment(cfg Config, first int64) (*segment, *os.File, error) {
	path := filepath.Join(cfg.Dir, segmentName(first))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, classify("create segment", err)
	}
	var hdr [fileHeaderSize]byte
	putFileHeader(hdr[:], first)
	_, err = f.WriteAt(hdr[:], 0)
	allocated := false
	if err == nil && !cfg.growing {
		err = errAllocate
		if !cfg.zeroFill {
			err = allocate(f, cfg.SegmentBytes)
			allocated = err == nil
		}
		if errors.Is(err, errAllocate) {
			err = zeroFill(f, fileHeaderSize, cfg.SegmentBytes)
		}
	}
	if err == nil && cfg.Sync != SyncOff {
		if err = fdatasync(f); err == nil {
			err = syncDir(cfg.Dir)
		}
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, nil, classify("create segment "+path, err)
	}
	seg := &segment{first: first, path: path, end: fileHeaderSize, last: first - 1, size: fileHeaderSize}
	if !cfg.growing {
		seg.size = max(cfg.SegmentBytes, fileHeaderSize)
	}
	seg.zeroed = seg.size
	if allocated {
		seg.zeroed = fileHeaderSize
	}
	return seg, f, nil
}

// zeroAhead keeps the blocks ahead of the records ready, at least zeroAheadBytes ahead, a chunk
// at a time. In a fallocated segment it writes zeros, so that the extents the records go into
// are written ones: an fdatasync then commits the journal once a chunk (for the chunk's
// conversion), not at every fsync as it does for records written into unwritten extents
// (bench-bulk at 100 records: serve/nop 0.68x fallocated against 0.92x zero-filled); the
// syncer's next fdatasync flushes the chunk with the records. In a recycled segment, whose blocks
// are written but whose pages were dropped (cache.go), it asks the kernel to read the chunk in:
// a write that covers part of a page not in the cache would read it from disk first, on the
// writer's path. A failed zero write ends the zeroing of that segment, which is only an
// optimisation.
func (l *Log) zeroAhead(seg *segment) {
	from := max(seg.zeroed, seg.end+headerSize)
	if from >= seg.size || from-seg.end >= zeroAheadBytes {
		return
	}
	to := min(from+int64(len(zeroChunk)), seg.size)
	if to < seg.size {
		to &^= pageSize - 1 // the next chunk starts on a page of its own
	}
	if seg.recycled {
		prefetch(l.cur, from, to)
	} else if _, err := l.cur.WriteAt(zeroChunk[:to-from], from); err != nil {
		l.setZeroed(seg, seg.size) // give up on this segment: it is only an optimisation
		return
	}
	l.setZeroed(seg, to)
}

// setZeroed moves seg's zeroed mark. Only the writer writes it, but readers copy the whole
// segment under l.mu (locate), so the write takes the lock too.
func (l *Log) setZeroed(seg *segment, to int64) {
	l.mu.Lock()
	seg.zeroed = to
	l.mu.Unlock()
}

// zeroAheadBytes and zeroChunk size zeroAhead's writes.
const zeroAheadBytes = 2 << 20

var zeroChunk [1 << 20]byte

// errAllocate means the filesystem cannot fallocate: new segments are zero-filled instead.
var errAllocate = errors.New("seglog: fallocate not supported")

// zeroFill writes zeros to f from off to end.
func zeroFill(f *os.File, off, end int64) error {
	zeros := make([]byte, min(1<<20, max(end-off, 0)))
	for off < end {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), end-off)], off)
		if err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// iovecs is a reusable list of buffers for one vectored write.
type iovecs struct {
	bufs [][]byte
	vec  sysIovecs
}

func (v *iovecs) reset() {
	clear(v.bufs)
	v.bufs = v.bufs[:0]
}

func (v *iovecs) add(b []byte) {
	if len(b) > 0 {
		v.bufs = append(v.bufs, b)
	}
}

// classify wraps err from action, marking lack of space as ErrDiskFull.
func classify(action string, err error) error {
	if isNoSpace(err) {
		return fmt.Errorf("seglog: %s: %w: %w", action, ErrDiskFull, err)
	}
	return fmt.Errorf("seglog: %s: %w", action, err)
}

// syncFile fdatasyncs f, through the test hook when one is set.
func (l *Log) syncFile(f *os.File) error {
	var err error
	if l.sy != nil {
		if hook := l.sy.beforeSync.Load(); hook != nil {
			err = (*hook)()
		}
	}
	if err == nil {
		err = fdatasync(f)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSyncFailed, f.Name(), err)
	}
	return nil
}

// WaitDurable blocks until id is durable, and returns nil then; or the sticky error of a failed
// fsync, ErrClosed, or ctx.Err(). With SyncNormal or SyncOff every written id is durable at once.
func (l *Log) WaitDurable(ctx context.Context, id int64) error {
	for {
		if l.durable.Load() >= id {
			return nil
		}
		if l.sy == nil {
			return fmt.Errorf("seglog: wait for id %d: never written", id)
		}
		ch, err := l.sy.changed()
		if l.durable.Load() >= id {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
