package sqlitec

import (
	"database/sql"
	"fmt"
	"math"
	"strings"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

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
	c.stmts[s] = struct{}{}
	if tail := libc.GoString(readPtr(pp + 8)); strings.TrimSpace(tail) != "" {
		s.Close()
		return nil, fmt.Errorf("sqlitec: prepare %s: more than one statement", abbrev(query))
	}
	return s, nil
}

// QueryInt64 prepares query, runs it once with args and returns the first column of its first
// row (sql.ErrNoRows if none): for one-off reads (a pragma, a count), not for hot paths.
func (c *Conn) QueryInt64(query string, args ...any) (n int64, err error) {
	st, err := c.Prepare(query)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return st.QueryInt64(args...)
}

// Close finalizes the statement and frees its arena. Statements are closed before their
// connection; one its connection's Close already finalized closes again as a no-op. The error is
// finalize's: the statement's last execution failed and was not reset (a Rows left open after an
// error, say), or SQLite could not release it.
func (s *Stmt) Close() error {
	if s == nil || s.p == 0 {
		return nil
	}
	if s.c.tls == nil {
		s.p = 0
		return errClosed
	}
	var err error
	if rc := sqlite3.Xsqlite3_finalize(s.c.tls, s.p); rc != sqlite3.SQLITE_OK {
		err = s.c.errorf(rc, "finalize %s", abbrev(s.query))
	}
	s.p = 0
	delete(s.c.stmts, s)
	if s.arena != 0 {
		libc.Xfree(s.c.tls, s.arena)
		s.arena, s.size = 0, 0
	}
	return err
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
			if err := s.reset(); err != nil {
				return 0, err
			}
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
		if err := s.reset(); err != nil {
			return 0, err
		}
		return v, nil
	case sqlite3.SQLITE_DONE:
		if err := s.reset(); err != nil {
			return 0, err
		}
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

// reset readies the statement to run again after it returned a row or finished, and trims its
// arena. After a step that succeeded reset returns SQLITE_OK; anything else is an error of its
// own, which it returns.
func (s *Stmt) reset() error {
	rc := sqlite3.Xsqlite3_reset(s.c.tls, s.p)
	s.trim()
	if rc != sqlite3.SQLITE_OK {
		return s.c.errorf(rc, "reset %s", abbrev(s.query))
	}
	return nil
}

// fail resets the statement after step returned rc and returns the error. reset's own code is
// step's again (sqlite3_reset returns the last step's error), so rc's error is the one to report.
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
