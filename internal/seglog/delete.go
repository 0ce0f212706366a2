package seglog

import (
	"fmt"
	"os"
)

// SegmentInfo describes one segment file, for retention and size accounting.
type SegmentInfo struct {
	Path         string
	First, Last  int64 // Last is First-1 when the segment is empty
	Bytes        int64
	LastReceived int64 // the last record's received time, Unix nanoseconds; 0 if empty
	Counts       Counts
}

// Segments lists the segments, oldest first; the last is the active one.
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{Path: s.path, First: s.first, Last: s.last, Bytes: s.end, LastReceived: s.lastReceived, Counts: s.counts}
	}
	return out
}

// DeleteThrough deletes, oldest first, every whole segment whose records all have ids ≤ id and
// are durable; the caller guarantees they are no longer needed (projected, past retention). When
// that covers the active segment too, DeleteThrough first starts a new empty one named after the
// next id, so ids are never reused, even once every record is deleted. Up to Config.Spares
// deleted segments are kept as spare files for the next rolls (spare.go), the rest removed; the
// directory is fsynced after. It returns the number of segments deleted and the bytes given
// back to the filesystem (spares are not). A Reader holding a deleted segment open finds it
// gone (Reader.Read skips it), even once the file is recycled and overwritten.
func (l *Log) DeleteThrough(id int64) (segments int, freed int64, err error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	id = min(id, l.durable.Load())
	l.mu.Lock()
	closed, active := l.closed, l.segs[len(l.segs)-1]
	next := l.next
	l.mu.Unlock()
	if closed {
		return 0, 0, ErrClosed
	}
	if active.last >= active.first && active.last <= id {
		if _, err := l.roll(next); err != nil {
			return 0, 0, fmt.Errorf("seglog: delete through %d: %w", id, err)
		}
	}
	l.mu.Lock()
	var doomed []*segment
	for _, s := range l.segs[:len(l.segs)-1] {
		if s.last > id {
			break
		}
		doomed = append(doomed, s)
	}
	l.mu.Unlock()
	for _, s := range doomed {
		kept, rerr := l.recycle(s)
		if rerr != nil {
			err = rerr
			break
		}
		if !kept {
			if err = os.Remove(s.path); err != nil && !os.IsNotExist(err) {
				err = fmt.Errorf("seglog: delete segment: %w", err)
				break
			}
			err = nil
			freed += s.end
		}
		l.mu.Lock()
		l.segs = l.segs[1:]
		l.mu.Unlock()
		segments++
	}
	if segments > 0 && l.cfg.Sync != SyncOff {
		if serr := syncDir(l.cfg.Dir); serr != nil && err == nil {
			err = fmt.Errorf("seglog: sync dir after deleting segments: %w", serr)
		}
	}
	return segments, freed, err
}
