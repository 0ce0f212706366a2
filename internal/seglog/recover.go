package seglog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// recover lists the segments, scans them and opens the last for writing. Sealed segments are
// checked record by record without their payloads (lengths chain to the file's end, ids are
// consecutive): a roll fdatasyncs the segment it seals, so a defect there is corruption, and
// recover refuses it naming the file and offset (ErrCorrupt). Readers verify every payload's
// checksum as they read it. The last segment is verified in full, checksums included, and cut at
// its first defect: that is a torn tail, written after the last fsync and never acknowledged.
func (l *Log) recover() error {
	ents, err := os.ReadDir(l.cfg.Dir)
	if err != nil {
		return fmt.Errorf("seglog: list segments: %w", err)
	}
	if err := l.listSpares(ents); err != nil {
		return err
	}
	for _, e := range ents {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			l.segs = append(l.segs, &segment{first: first, path: filepath.Join(l.cfg.Dir, e.Name())})
		}
	}
	slices.SortFunc(l.segs, func(a, b *segment) int { return int(a.first - b.first) })
	if len(l.segs) == 0 {
		seg, f, err := createSegment(l.cfg, 1)
		if err != nil {
			return err
		}
		l.segs, l.cur, l.next = []*segment{seg}, f, 1
		return nil
	}
	var buf []byte
	for i, seg := range l.segs {
		if i > 0 && seg.first != l.segs[i-1].last+1 {
			return fmt.Errorf("seglog: %s: first id %d does not follow the previous segment's last id %d: %w",
				seg.path, seg.first, l.segs[i-1].last, ErrCorrupt)
		}
		if buf, err = l.scan(seg, i == len(l.segs)-1, buf); err != nil {
			return err
		}
	}
	last := l.segs[len(l.segs)-1]
	if l.cur, err = os.OpenFile(last.path, os.O_RDWR, 0); err != nil {
		return fmt.Errorf("seglog: open last segment: %w", err)
	}
	// After a process crash the page cache may hold whole records that were never fsynced (their
	// writes were never acknowledged); sync them before readers may see them.
	if l.cfg.Sync != SyncOff {
		if err := fdatasync(l.cur); err != nil {
			l.cur.Close()
			return fmt.Errorf("seglog: sync last segment: %w: %w", ErrSyncFailed, err)
		}
	}
	l.next = last.last + 1
	l.durable.Store(last.last)
	return nil
}

// scan reads seg's records, fills its end, last and index, and for the last segment verifies
// checksums and cuts a torn tail. buf is reused across calls and returned.
func (l *Log) scan(seg *segment, active bool, buf []byte) ([]byte, error) {
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		return buf, fmt.Errorf("seglog: open segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return buf, fmt.Errorf("seglog: stat segment: %w", err)
	}
	size := st.Size()
	seg.last, seg.end, seg.size, seg.zeroed = seg.first-1, fileHeaderSize, size, size
	var fh [fileHeaderSize]byte
	if _, err := f.ReadAt(fh[:], 0); err != nil || parseFileHeader(fh[:], seg.first) != nil {
		// Torn while a roll created it: its header never reached the disk (a fallocated file's
		// size can, and reads as zeros). No record was written before that header was fsynced,
		// so the file holds none: write the header again.
		if active && (size <= fileHeaderSize || fh == [fileHeaderSize]byte{}) {
			putFileHeader(fh[:], seg.first)
			if _, err := f.WriteAt(fh[:], 0); err != nil {
				return buf, classify("rewrite segment header", err)
			}
			return buf, f.Truncate(fileHeaderSize)
		}
		if err == nil {
			err = parseFileHeader(fh[:], seg.first)
		}
		return buf, fmt.Errorf("seglog: %s at offset 0: %w: %w", seg.path, ErrCorrupt, err)
	}
	rs := recordScan{f: f, size: size, verify: active, buf: buf}
	off, sinceBytes, sinceRecs := int64(fileHeaderSize), int64(0), 0
	for off < size {
		h, defect := rs.check(off, seg.last+1)
		if defect != nil {
			return rs.buf, l.endScan(seg, f, off, size, active, defect)
		}
		if sinceBytes >= l.cfg.IndexBytes || sinceRecs >= l.cfg.IndexRecords {
			seg.index = append(seg.index, indexEntry{id: seg.last + 1, off: off})
			sinceBytes, sinceRecs = 0, 0
		}
		n := headerSize + int64(h.length)
		off += n
		sinceBytes += n
		sinceRecs++
		seg.last++
		seg.end = off
		seg.lastReceived = h.received
		seg.counts.add(h.sig, int64(h.records), int64(h.length))
		if active {
			l.idxBytes, l.idxRecs = sinceBytes, sinceRecs
		}
	}
	return rs.buf, nil
}

// endScan handles the defect found at off: corruption in a sealed segment; the zero-filled space
// or a torn tail in the active one.
func (l *Log) endScan(seg *segment, f *os.File, off, size int64, active bool, defect error) error {
	switch {
	case !active:
		return fmt.Errorf("seglog: %s at offset %d (record %d): %w: %w", seg.path, off, seg.last+1, ErrCorrupt, defect)
	case defect != errZeroFill:
		l.cfg.Logger.Warn("seglog: cutting a torn tail", "segment", seg.path, "offset", off, "dropped_bytes", size-off, "reason", defect.Error())
	}
	// Records written after a later page may have reached the disk without the one at off, and
	// a recycled segment holds stale records of an older generation after it (spare.go): scrub
	// them all, or a record the writer puts here next, of the same length, would make one of
	// this generation's never-acknowledged records after it look whole. Scrubbing rather than
	// cutting keeps the file's blocks allocated for the appends to come.
	if err := scrubTail(f, off, size); err != nil {
		return fmt.Errorf("seglog: clear the tail of %s after %d: %w", seg.path, off, err)
	}
	return nil
}

// recordScan checks records of one segment file of size bytes, their payloads' checksums too
// when verify is set; buf is reused for payloads.
type recordScan struct {
	f      *os.File
	size   int64
	verify bool
	hb     [headerSize]byte
	buf    []byte
}

// check reads the record at off and checks that it is whole and has id want.
func (rs *recordScan) check(off, want int64) (header, error) {
	if _, err := rs.f.ReadAt(rs.hb[:], off); err != nil {
		return header{}, fmt.Errorf("short header: %w", err)
	}
	if rs.hb == ([headerSize]byte{}) {
		return header{}, errZeroFill
	}
	h, err := parseHeader(rs.hb[:])
	if err != nil {
		return h, err
	}
	if h.id != want {
		return h, fmt.Errorf("id %d, want %d", h.id, want)
	}
	n := int64(h.length)
	if off+headerSize+n > rs.size {
		return h, fmt.Errorf("payload of %d bytes runs past the end (%d)", n, rs.size)
	}
	if rs.verify {
		rs.buf = slices.Grow(rs.buf[:0], int(n))[:n]
		if _, err := rs.f.ReadAt(rs.buf, off+headerSize); err != nil && !errors.Is(err, io.EOF) {
			return h, err
		}
		if got := recordCRC(rs.hb[:], rs.buf); got != h.crc {
			return h, fmt.Errorf("checksum %08x, want %08x", got, h.crc)
		}
	}
	return h, nil
}

// scrubTail overwrites with zeros every 1 MiB chunk of f between off and size that is not all
// zeros already, and fdatasyncs f if it wrote any.
func scrubTail(f *os.File, off, size int64) error {
	chunk := make([]byte, 1<<20)
	dirty := false
	for off < size {
		b := chunk[:min(int64(len(chunk)), size-off)]
		if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for _, c := range b {
			if c != 0 {
				clear(b)
				if _, err := f.WriteAt(b, off); err != nil {
					return err
				}
				dirty = true
				break
			}
		}
		off += int64(len(b))
	}
	if dirty {
		return fdatasync(f)
	}
	return nil
}

// errZeroFill marks an all-zero record header: the end of the records in the active segment,
// whose file is zero-filled ahead of the writer (createSegment).
var errZeroFill = errors.New("zero header")
