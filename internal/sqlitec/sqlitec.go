// Package sqlitec drives SQLite through modernc.org/sqlite/lib, the C library translated to Go,
// with neither database/sql nor the modernc.org/sqlite driver in between. It is for the one hot
// connection of the store, the projector's: a catch-up is bound by the thread that commits its
// slices, and on that thread the driver cost ~14% in binding parameters (per text a C
// allocation, a copy, a free, and a parameter-name lookup; per value an interface conversion)
// and ~9% in the connection's mutex, which the driver always opens with SQLITE_OPEN_FULLMUTEX.
//
// A Conn is opened with SQLITE_OPEN_NOMUTEX: it and its statements must be used by one goroutine
// at a time, and handed between goroutines only with a happens-before edge (a channel, a mutex).
// Texts and blobs are copied into C memory owned by their statement and bound as SQLITE_STATIC,
// so a statement allocates only while its arena grows. Everything else is SQLite's own
// semantics: this package adds no retries, caches or conversions beyond the Go types below.
package sqlitec

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	// The driver's init configures the library for the whole process (sqlite.go's init); a Conn
	// shares that library with the driver's connections.
	_ "modernc.org/sqlite"
)

// Error is an SQLite error: its extended result code and message.
type Error struct {
	code int
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Code returns the extended result code; Code()&0xff is the primary one (SQLITE_FULL, ...).
func (e *Error) Code() int { return e.code }

// Conn is one SQLite database connection.
type Conn struct {
	tls *libc.TLS
	db  uintptr
}

// Open opens (creating it if need be) the database file at path, a plain file name (not a URI),
// and runs "PRAGMA p" for each of pragmas, in order.
func Open(path string, pragmas ...string) (*Conn, error) {
	c := &Conn{tls: libc.NewTLS()}
	name, err := libc.CString(path)
	if err != nil {
		c.tls.Close()
		return nil, fmt.Errorf("sqlitec: open %s: %w", path, err)
	}
	defer libc.Xfree(c.tls, name)
	pdb := c.tls.Alloc(8)
	defer c.tls.Free(8)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE|sqlite3.SQLITE_OPEN_NOMUTEX|sqlite3.SQLITE_OPEN_EXRESCODE, 0)
	c.db = readPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		err := c.errorf(rc, "open %s", path)
		c.Close()
		return nil, err
	}
	for _, p := range pragmas {
		if err := c.Exec("PRAGMA " + p); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Close closes the connection. Statements still open keep it as a zombie until they are closed
// (sqlite3_close_v2).
func (c *Conn) Close() error {
	if c.tls == nil {
		return nil
	}
	var err error
	if c.db != 0 {
		if rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db); rc != sqlite3.SQLITE_OK {
			err = c.errorf(rc, "close")
		}
		c.db = 0
	}
	c.tls.Close()
	c.tls = nil
	return err
}

// errClosed is the error of a closed connection or statement.
var errClosed = errors.New("sqlitec: connection closed")

// Exec runs query, which may hold several statements, without arguments (sqlite3_exec).
func (c *Conn) Exec(query string) error {
	if c.tls == nil {
		return errClosed
	}
	q, err := libc.CString(query)
	if err != nil {
		return fmt.Errorf("sqlitec: %w", err)
	}
	defer libc.Xfree(c.tls, q)
	perr := c.tls.Alloc(8)
	defer c.tls.Free(8)
	clear(libc.GoBytes(perr, 8))
	if rc := sqlite3.Xsqlite3_exec(c.tls, c.db, q, 0, 0, perr); rc != sqlite3.SQLITE_OK {
		msg := readPtr(perr)
		defer sqlite3.Xsqlite3_free(c.tls, msg)
		text := libc.GoString(msg)
		if text == "" {
			text = libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
		}
		return &Error{code: int(sqlite3.Xsqlite3_extended_errcode(c.tls, c.db)),
			msg: fmt.Sprintf("sqlitec: %s: %s (%d)", abbrev(query), text, rc)}
	}
	return nil
}

// Status reads a sqlite3_db_status counter (sqlite3.SQLITE_DBSTATUS_*), resetting it if reset.
func (c *Conn) Status(op int, reset bool) (cur, highwater int, err error) {
	if c.tls == nil {
		return 0, 0, errClosed
	}
	p := c.tls.Alloc(8)
	defer c.tls.Free(8)
	r := int32(0)
	if reset {
		r = 1
	}
	if rc := sqlite3.Xsqlite3_db_status(c.tls, c.db, int32(op), p, p+4, r); rc != sqlite3.SQLITE_OK {
		return 0, 0, c.errorf(rc, "db status %d", op)
	}
	return int(readInt32(p)), int(readInt32(p + 4)), nil
}

// LastInsertRowid returns the rowid of the last row an INSERT on the connection inserted.
func (c *Conn) LastInsertRowid() int64 {
	return sqlite3.Xsqlite3_last_insert_rowid(c.tls, c.db)
}

// errorf makes the error of result code rc, with the connection's message.
func (c *Conn) errorf(rc int32, format string, args ...any) error {
	code := int(rc)
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if ext := sqlite3.Xsqlite3_extended_errcode(c.tls, c.db); ext&0xff == rc&0xff {
			code = int(ext)
			msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
		}
	}
	return &Error{code: code, msg: fmt.Sprintf("sqlitec: %s: %s (%d)", fmt.Sprintf(format, args...), msg, code)}
}

// Stmt is a prepared statement. Its bound texts and blobs live in its arena, C memory reused by
// every execution.
type Stmt struct {
	c      *Conn
	p      uintptr
	query  string
	params int
	arena  uintptr
	size   int   // the arena's bytes
	conv   []Arg // bind's conversions of []any, reused
}

// Prepare compiles query, one statement, to be run many times (SQLITE_PREPARE_PERSISTENT).
func (c *Conn) Prepare(query string) (*Stmt, error) {
	if c.tls == nil {
		return nil, errClosed
	}
	q, err := libc.CString(query)
	if err != nil {
		return nil, fmt.Errorf("sqlitec: %w", err)
	}
	defer libc.Xfree(c.tls, q)
	pp := c.tls.Alloc(16)
	defer c.tls.Free(16)
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, q, int32(len(query)+1), sqlite3.SQLITE_PREPARE_PERSISTENT, pp, pp+8)
	p := readPtr(pp)
	if rc != sqlite3.SQLITE_OK {
		return nil, c.errorf(rc, "prepare %s", abbrev(query))
	}
	if p == 0 {
		return nil, fmt.Errorf("sqlitec: prepare %s: no statement", abbrev(query))
	}
	s := &Stmt{c: c, p: p, query: query, params: int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, p))}
	if tail := libc.GoString(readPtr(pp + 8)); strings.TrimSpace(tail) != "" {
		s.Close()
		return nil, fmt.Errorf("sqlitec: prepare %s: more than one statement", abbrev(query))
	}
	return s, nil
}

// QueryInt64 prepares query, runs it once with args and returns the first column of its first
// row (sql.ErrNoRows if none): for one-off reads (a pragma, a count), not for hot paths.
func (c *Conn) QueryInt64(query string, args ...any) (int64, error) {
	st, err := c.Prepare(query)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.QueryInt64(args...)
}

// Close finalizes the statement and frees its arena. Statements are closed before their
// connection: after it, Close reports errClosed and leaks the statement.
func (s *Stmt) Close() error {
	if s == nil || s.p == 0 {
		return nil
	}
	if s.c.tls == nil {
		s.p = 0
		return errClosed
	}
	// finalize returns the error of the statement's last execution, already reported.
	sqlite3.Xsqlite3_finalize(s.c.tls, s.p)
	s.p = 0
	if s.arena != 0 {
		libc.Xfree(s.c.tls, s.arena)
		s.arena, s.size = 0, 0
	}
	return nil
}

// Exec runs the statement with args, stepping through any rows it returns, and returns the
// connection's last inserted rowid. The arguments may be nil, int64, int, int32, uint32, bool,
// float64, string or []byte (nil binds NULL).
func (s *Stmt) Exec(args ...any) (lastID int64, err error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	return s.run()
}

// ExecArgs is Exec with the arguments as Args, which a caller can build without allocating.
func (s *Stmt) ExecArgs(args []Arg) (lastID int64, err error) {
	if err := s.bindArgs(args); err != nil {
		return 0, err
	}
	return s.run()
}

// run steps the bound statement to its end and returns the connection's last inserted rowid.
func (s *Stmt) run() (lastID int64, err error) {
	for {
		switch rc := sqlite3.Xsqlite3_step(s.c.tls, s.p); rc {
		case sqlite3.SQLITE_ROW:
			continue
		case sqlite3.SQLITE_DONE:
			sqlite3.Xsqlite3_reset(s.c.tls, s.p)
			s.trim()
			return s.c.LastInsertRowid(), nil
		default:
			return 0, s.fail(rc)
		}
	}
}

// QueryInt64 runs the statement with args and returns the first column of its first row
// (sql.ErrNoRows if it returns none).
func (s *Stmt) QueryInt64(args ...any) (int64, error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	switch rc := sqlite3.Xsqlite3_step(s.c.tls, s.p); rc {
	case sqlite3.SQLITE_ROW:
		v := sqlite3.Xsqlite3_column_int64(s.c.tls, s.p, 0)
		if rc := sqlite3.Xsqlite3_reset(s.c.tls, s.p); rc != sqlite3.SQLITE_OK {
			return 0, s.c.errorf(rc, "%s", abbrev(s.query))
		}
		s.trim()
		return v, nil
	case sqlite3.SQLITE_DONE:
		sqlite3.Xsqlite3_reset(s.c.tls, s.p)
		s.trim()
		return 0, sql.ErrNoRows
	default:
		return 0, s.fail(rc)
	}
}

// Query runs the statement with args; the caller reads its rows and closes them before the
// statement's next execution.
func (s *Stmt) Query(args ...any) (*Rows, error) {
	if err := s.bind(args); err != nil {
		return nil, err
	}
	return &Rows{s: s}, nil
}

// fail resets the statement after step returned rc and returns the error.
func (s *Stmt) fail(rc int32) error {
	err := s.c.errorf(rc, "%s", abbrev(s.query))
	sqlite3.Xsqlite3_reset(s.c.tls, s.p)
	s.trim()
	return err
}

// maxKeptArena is the most arena a statement keeps between executions: one that bound more
// (a slice of large log bodies, say) frees it, so that it does not hold the most it ever bound
// for the rest of the connection's life. The store's largest regular binding, 256 log_text
// documents of a load's logs, is 1–2 MiB.
const maxKeptArena = 4 << 20

// trim frees an arena over maxKeptArena, once the statement is reset.
func (s *Stmt) trim() {
	if s.size <= maxKeptArena {
		return
	}
	sqlite3.Xsqlite3_clear_bindings(s.c.tls, s.p)
	libc.Xfree(s.c.tls, s.arena)
	s.arena, s.size = 0, 0
}

// bind binds args to the statement's parameters, in order; there must be one per parameter.
func (s *Stmt) bind(args []any) error {
	s.conv = s.conv[:0]
	for _, a := range args {
		s.conv = append(s.conv, Value(a))
	}
	err := s.bindArgs(s.conv)
	clear(s.conv) // drop the references to the caller's texts and blobs
	return err
}

// bindArgs binds args to the statement's parameters, texts and blobs copied into its arena.
func (s *Stmt) bindArgs(args []Arg) error {
	if s.p == 0 || s.c.tls == nil {
		return errClosed
	}
	if len(args) != s.params {
		return fmt.Errorf("sqlitec: %s: %d arguments for %d parameters", abbrev(s.query), len(args), s.params)
	}
	need := 0
	for i := range args {
		switch a := &args[i]; a.kind {
		case argText, argBlob:
			need += len(a.s)
		case argBad:
			return fmt.Errorf("sqlitec: %s: argument %d: cannot bind a %s", abbrev(s.query), i+1, a.s)
		}
	}
	if err := s.reserve(need); err != nil {
		return err
	}
	tls, off := s.c.tls, 0
	for i := range args {
		a := &args[i]
		n := int32(i + 1)
		var rc int32
		switch a.kind {
		case argNull:
			rc = sqlite3.Xsqlite3_bind_null(tls, s.p, n)
		case argInt:
			rc = sqlite3.Xsqlite3_bind_int64(tls, s.p, n, a.i)
		case argFloat:
			rc = sqlite3.Xsqlite3_bind_double(tls, s.p, n, math.Float64frombits(uint64(a.i)))
		case argText:
			// A text with a null pointer would be NULL: an empty one points at the arena,
			// which reserve always allocates.
			copy(libc.GoBytes(s.arena+uintptr(off), len(a.s)), a.s)
			rc = sqlite3.Xsqlite3_bind_text(tls, s.p, n, s.arena+uintptr(off), int32(len(a.s)), 0)
			off += len(a.s)
		case argBlob:
			copy(libc.GoBytes(s.arena+uintptr(off), len(a.s)), a.s)
			rc = sqlite3.Xsqlite3_bind_blob(tls, s.p, n, s.arena+uintptr(off), int32(len(a.s)), 0)
			off += len(a.s)
		}
		if rc != sqlite3.SQLITE_OK {
			return s.c.errorf(rc, "%s: bind argument %d", abbrev(s.query), i+1)
		}
	}
	return nil
}

// reserve makes the arena hold at least n bytes. It is called before any argument is bound,
// so no binding points into an arena it frees.
func (s *Stmt) reserve(n int) error {
	if s.arena != 0 && n <= s.size {
		return nil
	}
	size := max(256, s.size)
	for size < n {
		size *= 2
	}
	p := libc.Xmalloc(s.c.tls, uint64(size))
	if p == 0 {
		return fmt.Errorf("sqlitec: %s: cannot allocate %d bytes for the arguments", abbrev(s.query), size)
	}
	if s.arena != 0 {
		// Bindings of the last execution point into the old arena: drop them first.
		sqlite3.Xsqlite3_clear_bindings(s.c.tls, s.p)
		libc.Xfree(s.c.tls, s.arena)
	}
	s.arena, s.size = p, size
	return nil
}

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
	switch rc := sqlite3.Xsqlite3_step(r.s.c.tls, r.s.p); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		r.Close()
		return false, nil
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

// Close ends the query; the statement can run again.
func (r *Rows) Close() {
	if !r.done {
		r.done = true
		sqlite3.Xsqlite3_reset(r.s.c.tls, r.s.p)
		r.s.trim()
	}
}

// abbrev shortens a query for an error message.
func abbrev(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 80 {
		q = q[:77] + "..."
	}
	return q
}

// readPtr reads the C pointer stored at p, in C memory.
func readPtr(p uintptr) uintptr {
	if strconv.IntSize == 32 {
		return uintptr(binary.NativeEndian.Uint32(libc.GoBytes(p, 4)))
	}
	return uintptr(binary.NativeEndian.Uint64(libc.GoBytes(p, 8)))
}

// readInt32 reads the C int stored at p, in C memory.
func readInt32(p uintptr) int32 { return int32(binary.NativeEndian.Uint32(libc.GoBytes(p, 4))) }
