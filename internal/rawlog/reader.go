package rawlog

import (
	"fmt"
	"sync"

	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// Row is one raw request as a projector reads it back, in id order.
type Row struct {
	ID       int64
	Signal   signal.Signal
	Records  int64 // the appender's count of records in Payload
	Received int64 // Unix nanoseconds at Append
	Payload  []byte
}

// Signals is a set of signals (bit 1 << signal).
type Signals uint8

// SignalsOf returns the set of sigs.
func SignalsOf(sigs ...signal.Signal) Signals {
	var m Signals
	for _, s := range sigs {
		m |= 1 << s
	}
	return m
}

// AllSignals holds logs, metrics and traces.
var AllSignals = SignalsOf(signal.Logs, signal.Metrics, signal.Traces)

// Has reports whether s is in the set.
func (m Signals) Has(s signal.Signal) bool { return s <= signal.Traces && m&(1<<s) != 0 }

// Filter says whose payloads a reader wants: with Only, the rows of those signals; else every
// row but those of Except, a damaged row whose signal is no signal at all included. Read returns
// the other rows too, without their payloads, so a reader's high-water mark passes them.
type Filter struct {
	Only, Except Signals
}

// Takes reports whether the filter wants the payloads of sig's rows.
func (f Filter) Takes(sig signal.Signal) bool {
	if f.Only != 0 {
		return f.Only.Has(sig)
	}
	return !f.Except.Has(sig)
}

// Limits bound what one Read returns.
type Limits struct {
	// Rows is the most rows of the filter's signals; the rows of others between them are read
	// too, up to SkipFactor times Rows rows in all.
	Rows       int
	SkipFactor int
	// Records and Bytes end the read one wanted row after the rows' weight (their records plus
	// RowWeight each) passes Records or their payload bytes pass Bytes.
	Records, Bytes int64
	RowWeight      int64
	// Alloc, if set, gives the buffer each payload is copied into (an arena); else each row
	// gets a buffer of its own.
	Alloc func(n int) []byte
}

// Reader reads durable raw rows in id order for one projector. Its methods may be called from
// several goroutines, one at a time.
type Reader struct {
	mu     sync.Mutex
	r      *seglog.Reader
	filter Filter
	seg    []seglog.Row // scratch: the rows of one seglog read
}

// OpenReader returns a reader of log for the rows filter takes. It reads only durable rows
// (seglog.Log.Durable): what a crash could lose is never projected.
func OpenReader(log *seglog.Log, filter Filter) *Reader {
	return &Reader{r: log.NewReader(), filter: filter}
}

// Read replaces rows with the raw rows after raw id after, within lim: the last row of the
// filter's signals may be past the limits, kept so the caller sees that more is pending. Each
// payload is copied once out of the segment reader's buffer, into lim.Alloc's buffer when given.
// The rows of other signals come back without their payloads, so the caller's mark passes them.
func (r *Reader) Read(rows *[]Row, after int64, lim Limits) error {
	*rows = (*rows)[:0]
	r.mu.Lock()
	defer r.mu.Unlock()
	scan := lim.Rows
	if r.filter.Only != 0 || r.filter.Except != 0 {
		scan *= max(lim.SkipFactor, 1)
	}
	var own, scanned int
	var records, bytes int64
	for scanned < scan {
		var err error
		// The segment reader stops at what is left of the limits (it returns at least one
		// row): asked for rows alone it read a whole slice's worth of 12 KB payloads each time,
		// of which the bytes limit kept a fraction (6× the projector's reading, 400 MB RSS).
		// It weighs rows as the slice does: unweighted, a read of 1-record rows went on to 8,192
		// rows where the slice takes 1,171, and each projector's buffer grew to 4–7 MB, most of
		// serve's live heap under a 1-record load.
		sl := seglog.Limits{Rows: scan - scanned, RowWeight: int(lim.RowWeight)}
		if lim.Bytes > 0 {
			sl.Bytes = max(1, lim.Bytes-bytes)
		}
		if lim.Records > 0 {
			sl.Records = int(max(1, lim.Records-records))
		}
		r.seg, after, err = r.r.Read(after, sl, r.seg)
		if err != nil {
			return fmt.Errorf("read raw: %w", err)
		}
		if len(r.seg) == 0 {
			return nil
		}
		for i := range r.seg {
			sr := &r.seg[i]
			row := Row{ID: sr.ID, Signal: sr.Signal, Records: int64(sr.Records), Received: sr.Received}
			scanned++
			takes := r.filter.Takes(row.Signal)
			if takes {
				if lim.Alloc != nil {
					row.Payload = append(lim.Alloc(len(sr.Payload))[:0], sr.Payload...)
				} else {
					row.Payload = append([]byte(nil), sr.Payload...)
				}
			}
			*rows = append(*rows, row)
			if !takes {
				continue
			}
			if own++; own == lim.Rows || records > lim.Records || bytes > lim.Bytes {
				return nil
			}
			records += row.Records + lim.RowWeight
			bytes += int64(len(row.Payload))
		}
	}
	return nil
}

// Close closes the reader's descriptor.
func (r *Reader) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Close()
}
