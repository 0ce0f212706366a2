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
	"encoding/binary"
	"errors"
	"fmt"
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
	// stmts are the statements prepared on the connection and not yet closed, so that Close
	// can finalize and name them rather than leave the connection a zombie that holds the
	// database file open (sqlite3_close_v2) and their arenas allocated.
	stmts map[*Stmt]struct{}
}

var (
	// ErrOpenStatements is the error of a Conn's Close that found statements still open: it
	// closed them and the connection, and names them in the error.
	ErrOpenStatements = errors.New("sqlitec: statements still open at close")
	// errClosed is the error of a closed connection or statement.
	errClosed = errors.New("sqlitec: connection closed")
)

// Open opens (creating it if need be) the database file at path, a plain file name (not a URI),
// and runs "PRAGMA p" for each of pragmas, in order.
func Open(path string, pragmas ...string) (*Conn, error) {
	c := &Conn{tls: libc.NewTLS(), stmts: map[*Stmt]struct{}{}}
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

// Close closes the connection. Its statements are to be closed first: any still open are
// finalized here, and Close returns an error that wraps ErrOpenStatements and names them, along
// with any error finalizing or closing returned. The connection is closed either way.
func (c *Conn) Close() error {
	if c.tls == nil {
		return nil
	}
	var errs []error
	if len(c.stmts) > 0 {
		errs = append(errs, c.closeStmts())
	}
	if c.db != 0 {
		if rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db); rc != sqlite3.SQLITE_OK {
			errs = append(errs, c.errorf(rc, "close"))
		}
		c.db = 0
	}
	c.tls.Close()
	c.tls = nil
	return errors.Join(errs...)
}

// closeStmts finalizes the statements still open, returning ErrOpenStatements with their
// queries, in order, and any error finalizing them returned.
func (c *Conn) closeStmts() error {
	open := make([]*Stmt, 0, len(c.stmts))
	for s := range c.stmts {
		open = append(open, s)
	}
	slices.SortFunc(open, func(a, b *Stmt) int { return strings.Compare(a.query, b.query) })
	names := make([]string, len(open))
	errs := []error{nil}
	for i, s := range open {
		names[i] = strconv.Quote(abbrev(s.query))
		errs = append(errs, s.Close())
	}
	errs[0] = fmt.Errorf("%w: %d: %s", ErrOpenStatements, len(open), strings.Join(names, ", "))
	return errors.Join(errs...)
}

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
