package seglog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/otelbench/otelbench/internal/signal"
)

// Limits bound one Read. Zero means no bound for Rows, Records and Bytes, and every signal.
// A Read returns at least one row when a durable row matches, whatever the bounds.
type Limits struct {
	Rows    int
	Records int
	Bytes   int64 // payload bytes
	Signal  signal.Signal
	// RowWeight is what each row counts toward Records beyond its own records, so that a
	// caller that bounds rows by weight (rawlog, for the projectors' slices) reads no further
	// than it will use.
	RowWeight int
}

// readAhead is the least a Reader reads with one pread.
const readAhead = 256 << 10

// Reader reads durable records in id order with pread through a descriptor of its own, into a
// buffer it reuses. Readers are independent of each other and of the writer; one Reader is not
// safe for concurrent use.
type Reader struct {
	l      *Log
	f      *os.File
	fFirst int64 // the first id of the segment f reads
	buf    []byte
	bufOff int64 // file offset of buf[0]
	// released is the page cache mark of the segment read (cache.go) when it was located:
	// what the Reader reads below it, it drops from the cache once copied; from dropFrom on.
	released, dropFrom int64
}

// NewReader returns a Reader. Close releases its descriptor.
func (l *Log) NewReader() *Reader { return &Reader{l: l} }

// Close closes the Reader's descriptor.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Read appends to dst[:0] the durable rows with ids above after, in id order, within lim and
// within one segment, and returns them with through, the highest id it examined (returned or
// skipped by the signal filter): the next Read continues after through. Rows' payloads alias the
// Reader's buffer until its next Read. Ids below the oldest stored segment (deleted) are skipped.
// A record that fails its checks returns an error wrapping ErrCorrupt naming file and offset.
func (r *Reader) Read(after int64, lim Limits, dst []Row) (rows []Row, through int64, err error) {
	rows, through = dst[:0], after
	for {
		durable := r.l.durable.Load()
		if through >= durable {
			return rows, through, nil
		}
		seg, ok := r.l.locate(through + 1)
		if !ok {
			return rows, through, nil
		}
		if err := r.open(seg); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted since locate: the next locate finds the oldest left
			}
			return rows, through, err
		}
		rows, through, err = r.readSegment(&seg, through, min(durable, seg.last), lim, rows)
		if err != nil && r.l.deleted(seg.first) {
			// Deleted while read, and its file recycled and overwritten since (spare.go): its
			// ids are gone, as a deleted segment's are; the next locate finds the oldest left.
			r.Close()
			if len(rows) > 0 {
				return rows, through, nil
			}
			continue
		}
		if err != nil || len(rows) > 0 || through < seg.last {
			return rows, through, err
		}
		// Everything in this segment was filtered out: go on to the next.
	}
}

// locate returns a copy of the segment holding id (or the oldest, when id was deleted) with its
// offset index as of now.
func (l *Log) locate(id int64) (segment, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].first > id }) - 1
	i = max(i, 0)
	s := *l.segs[i]
	return s, s.last >= s.first && s.last >= id
}

// deleted reports whether the segment whose first id is first has been deleted: deletion takes
// the oldest segments.
func (l *Log) deleted(first int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return first < l.segs[0].first
}

// open points r.f at seg's file.
func (r *Reader) open(seg segment) error {
	if r.f != nil && r.fFirst == seg.first {
		return nil
	}
	r.Close()
	f, err := os.Open(seg.path)
	if err != nil {
		return fmt.Errorf("seglog: open segment to read: %w", err)
	}
	r.f, r.fFirst, r.dropFrom = f, seg.first, 0
	return nil
}

// readSegment reads seg's rows above after and at most through last.
func (r *Reader) readSegment(seg *segment, after, last int64, lim Limits, rows []Row) ([]Row, int64, error) {
	id, off := seg.first, int64(fileHeaderSize)
	if want := after + 1; want > seg.first {
		i := sort.Search(len(seg.index), func(i int) bool { return seg.index[i].id > want }) - 1
		if i >= 0 {
			id, off = seg.index[i].id, seg.index[i].off
		}
	}
	r.buf, r.bufOff, r.released = r.buf[:0], off, seg.released
	through := after
	var records int
	var bytes int64
	for id <= last {
		hb, err := r.fill(off, headerSize, seg.end)
		if err != nil {
			return rows, through, r.corrupt(seg, off, err)
		}
		h, err := parseHeader(hb)
		if err == nil && h.id != id {
			err = fmt.Errorf("id %d, want %d", h.id, id)
		}
		if err != nil {
			return rows, through, r.corrupt(seg, off, err)
		}
		n := int64(h.length)
		if id <= after || (lim.Signal != 0 && h.sig != lim.Signal) {
			if id > after {
				through = id
			}
			off += headerSize + n
			id++
			if len(rows) == 0 { // nothing aliases the buffer yet: keep it small
				r.drop(off)
			}
			continue
		}
		if len(rows) > 0 && ((lim.Rows > 0 && len(rows) >= lim.Rows) ||
			(lim.Records > 0 && records+int(h.records)+lim.RowWeight > lim.Records) ||
			(lim.Bytes > 0 && bytes+n > lim.Bytes)) {
			break
		}
		rec, err := r.fill(off, headerSize+n, seg.end)
		if err != nil {
			return rows, through, r.corrupt(seg, off, err)
		}
		payload := rec[headerSize:]
		if got := recordCRC(rec[:headerSize], payload); got != h.crc {
			return rows, through, r.corrupt(seg, off, fmt.Errorf("checksum %08x, want %08x", got, h.crc))
		}
		rows = append(rows, Row{ID: id, Signal: h.sig, Records: int(h.records), Received: h.received, Payload: payload[:n:n]})
		records += int(h.records) + lim.RowWeight
		bytes += n
		through = id
		off += headerSize + n
		id++
	}
	return rows, through, nil
}

// fill returns the n bytes at file offset off, reading into r.buf (which holds a contiguous run
// of the file from r.bufOff) as needed, never past end.
func (r *Reader) fill(off, n, end int64) ([]byte, error) {
	if off+n > end {
		return nil, fmt.Errorf("record of %d bytes runs past the segment's end %d", n, end)
	}
	have := r.bufOff + int64(len(r.buf))
	if off+n > have {
		want := min(max(off+n-have, readAhead), end-have)
		start := len(r.buf)
		r.buf = slices.Grow(r.buf, int(want))[:start+int(want)]
		if _, err := r.f.ReadAt(r.buf[start:], have); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if have+want <= r.released { // cache.go: released pages read back are not kept
			r.dropFrom = dropBehind(r.f, min(r.dropFrom, have), have+want)
		}
	}
	i := off - r.bufOff
	return r.buf[i : i+n], nil
}

// drop discards the buffered bytes before file offset off, once they are a read-ahead's worth
// or all of the buffer: moving the rest down at every skipped record made a filtered read
// quadratic (a traces projector under a logs-only load of 1-record requests moved ~128 KiB a
// skipped row, 69% of serve's CPU at 2,000 req/s; BenchmarkReadSkipping).
func (r *Reader) drop(off int64) {
	i := min(off-r.bufOff, int64(len(r.buf)))
	if i < readAhead && i < int64(len(r.buf)) {
		return
	}
	r.buf = r.buf[:copy(r.buf, r.buf[i:])]
	r.bufOff += i
}

func (r *Reader) corrupt(seg *segment, off int64, err error) error {
	return fmt.Errorf("seglog: %s at offset %d: %w: %w", seg.path, off, ErrCorrupt, err)
}
