package rawlog

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Row is one raw request as a projector reads it back, in id order.
type Row struct {
	ID       int64
	Signal   signal.Signal
	Records  int64 // the appender's count of records in Payload
	Received int64 // Unix nanoseconds at Append
	Encoding int64 // 0: protobuf as appended; 1: zstd-compressed protobuf
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

// sqlList returns the set as a list of signal values for SQL's IN.
func (m Signals) sqlList() string {
	var vals []string
	for s := signal.Logs; s <= signal.Traces; s++ {
		if m.Has(s) {
			vals = append(vals, fmt.Sprint(int(s)))
		}
	}
	return strings.Join(vals, ", ")
}

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

// SQL returns Takes as an SQL condition on raw's signal column, or "" for every row.
func (f Filter) SQL() string {
	switch {
	case f.Only != 0:
		return "signal IN (" + f.Only.sqlList() + ")"
	case f.Except != 0:
		return "signal NOT IN (" + f.Except.sqlList() + ")"
	}
	return ""
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
	mu      sync.Mutex
	c       *sqlitec.Conn
	sel     *sqlitec.Stmt
	filter  Filter
	durable *atomic.Int64
}

// OpenReader opens a reader of the raw log in the file at path for the rows filter takes. It
// reads only rows at or below durable, the high-water mark the writer advances once a commit
// is durable.
func OpenReader(path string, filter Filter, durable *atomic.Int64) (*Reader, error) {
	c, err := sqlitec.Open(path, append(append([]string(nil), schema.ConnPragmas...), "cache_size(-256)", "query_only(true)")...)
	if err != nil {
		return nil, err
	}
	return &Reader{c: c, filter: filter, durable: durable}, nil
}

// Read replaces rows with the raw rows after raw id after, within lim: the last row of the
// filter's signals may be past the limits, kept so the caller sees that more is pending. It
// reads on a sqlitec connection, which copies each payload once, into lim.Alloc's buffer when
// given: through database/sql each was copied twice (~300 bytes of garbage a load-shaped log).
func (r *Reader) Read(rows *[]Row, after int64, lim Limits) error {
	*rows = (*rows)[:0]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sel == nil {
		payload := "payload"
		if cond := r.filter.SQL(); cond != "" {
			payload = "CASE WHEN " + cond + " THEN payload END"
		}
		st, err := r.c.Prepare(`SELECT id, signal, records, received_unix_nano, encoding, ` + payload + `
			FROM raw WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`)
		if err != nil {
			return fmt.Errorf("prepare raw select: %w", err)
		}
		r.sel = st
	}
	scan := int64(lim.Rows)
	if r.filter.SQL() != "" {
		scan *= int64(lim.SkipFactor)
	}
	rs, err := r.sel.Query(after, r.durable.Load(), scan)
	if err != nil {
		return fmt.Errorf("read raw: %w", err)
	}
	defer rs.Close()
	var own int
	var records, bytes int64
	for {
		if ok, err := rs.Next(); err != nil {
			return fmt.Errorf("read raw: %w", err)
		} else if !ok {
			return nil
		}
		row := Row{ID: rs.Int64(0), Signal: signal.Signal(rs.Int64(1)), Records: rs.Int64(2),
			Received: rs.Int64(3), Encoding: rs.Int64(4)}
		if lim.Alloc != nil {
			_, row.Payload = rs.AppendBytes(lim.Alloc(rs.Len(5)), 5)
		} else {
			row.Payload = rs.Bytes(5)
		}
		*rows = append(*rows, row)
		if !r.filter.Takes(row.Signal) {
			continue
		}
		if own++; own == lim.Rows || records > lim.Records || bytes > lim.Bytes {
			return nil
		}
		records += row.Records + lim.RowWeight
		bytes += int64(len(row.Payload))
	}
}

// Close closes the reader's statement and connection.
func (r *Reader) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sel != nil {
		r.sel.Close()
		r.sel = nil
	}
	return r.c.Close()
}
