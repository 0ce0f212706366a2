package sqlitec

import (
	"slices"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Rows are the rows of a query, read with Next and the column accessors.
type Rows struct {
	s    *Stmt
	done bool
}

// Next steps to the next row, reporting false at the end.
func (r *Rows) Next() (bool, error) {
	if r.done {
		return false, nil
	}
	if r.s.p == 0 || r.s.c.tls == nil {
		r.done = true
		return false, errClosed
	}
	switch rc := sqlite3.Xsqlite3_step(r.s.c.tls, r.s.p); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, r.Close()
	default:
		r.done = true
		return false, r.s.fail(rc)
	}
}

// Int64 returns column i of the current row as an integer (0 for NULL).
func (r *Rows) Int64(i int) int64 {
	return sqlite3.Xsqlite3_column_int64(r.s.c.tls, r.s.p, int32(i))
}

// Null reports whether column i of the current row is NULL.
func (r *Rows) Null(i int) bool {
	return sqlite3.Xsqlite3_column_type(r.s.c.tls, r.s.p, int32(i)) == sqlite3.SQLITE_NULL
}

// Bytes returns a copy of column i of the current row as bytes (nil for NULL).
func (r *Rows) Bytes(i int) []byte {
	_, b := r.AppendBytes(nil, i)
	return b
}

// Len returns the size in bytes of column i of the current row, a blob's (0 for NULL).
func (r *Rows) Len(i int) int {
	return int(sqlite3.Xsqlite3_column_bytes(r.s.c.tls, r.s.p, int32(i)))
}

// AppendBytes appends column i of the current row to buf, for a caller that reads many values
// into one buffer it reuses. It returns the extended buffer and the value within it, which is
// nil for NULL and empty, not nil, for an empty value.
func (r *Rows) AppendBytes(buf []byte, i int) (_, value []byte) {
	tls, p := r.s.c.tls, r.s.p
	if sqlite3.Xsqlite3_column_type(tls, p, int32(i)) == sqlite3.SQLITE_NULL {
		return buf, nil
	}
	b := sqlite3.Xsqlite3_column_blob(tls, p, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(tls, p, int32(i)))
	if n == 0 {
		return buf, []byte{}
	}
	start := len(buf)
	buf = slices.Grow(buf, n)[:start+n]
	copy(buf[start:], libc.GoBytes(b, n))
	return buf, buf[start : start+n : start+n]
}

// Text returns column i of the current row as a string ("" for NULL).
func (r *Rows) Text(i int) string {
	tls, p := r.s.c.tls, r.s.p
	b := sqlite3.Xsqlite3_column_text(tls, p, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(tls, p, int32(i)))
	if b == 0 || n == 0 {
		return ""
	}
	return string(libc.GoBytes(b, n))
}

// Close ends the query; the statement can run again. Its error is reset's, which after rows
// read without error is none: a caller that stops early and defers Close may ignore it.
func (r *Rows) Close() error {
	if r.done {
		return nil
	}
	r.done = true
	if r.s.p == 0 || r.s.c.tls == nil {
		return nil
	}
	return r.s.reset()
}
