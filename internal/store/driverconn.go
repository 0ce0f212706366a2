package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// The projector runs each slice's transaction on telemetry.db's driver connection
// (sql.Conn.Raw), not through database/sql: for every statement execution database/sql
// allocates a []driver.NamedValue as long as the arguments and converts each of them, ~900 bytes
// a span with its 20 columns (a quarter of all the bytes a slice allocated) and ~4% of the
// projector's CPU, and under the 64 MiB soft memory limit that garbage drove ~20 GC cycles a
// second during a catch-up, each stopping and signalling the projector's thread. Here each
// statement reuses one argument slice. Statements are prepared on the connection once, on first
// use, and closed with the projector.

// dconn is the projector's driver connection, valid inside one sql.Conn.Raw call.
type dconn struct {
	ctx  context.Context
	conn driver.Conn
}

// onConn runs f on the driver connection of db, a pool of one connection (openOne).
func onConn(db *sql.DB, f func(c *dconn) error) error {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("take the connection: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		return f(&dconn{ctx: ctx, conn: dc.(driver.Conn)})
	})
}

// dstmt is a statement prepared on a dconn's connection, with its argument slice.
type dstmt struct {
	ctx  context.Context
	st   driver.Stmt
	args []driver.NamedValue
}

func (c *dconn) prepare(query string) (*dstmt, error) {
	pc, ok := c.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("store: the sqlite driver's connections cannot prepare with a context")
	}
	st, err := pc.PrepareContext(c.ctx, query)
	if err != nil {
		return nil, err
	}
	_, exec := st.(driver.StmtExecContext)
	_, queries := st.(driver.StmtQueryContext)
	if !exec || !queries {
		st.Close()
		return nil, errors.New("store: the sqlite driver's statements do not take a context")
	}
	return &dstmt{ctx: c.ctx, st: st}, nil
}

// begin starts a transaction on the connection.
func (c *dconn) begin() (driver.Tx, error) {
	if bc, ok := c.conn.(driver.ConnBeginTx); ok {
		return bc.BeginTx(c.ctx, driver.TxOptions{})
	}
	return nil, errors.New("store: the sqlite driver's connections cannot begin a transaction with a context")
}

// bind converts vals as database/sql would (driver.DefaultParameterConverter) into s.args.
func (s *dstmt) bind(vals []any) ([]driver.NamedValue, error) {
	if cap(s.args) < len(vals) {
		s.args = make([]driver.NamedValue, len(vals))
		for i := range s.args {
			s.args[i].Ordinal = i + 1
		}
	}
	args := s.args[:len(vals)]
	for i, v := range vals {
		switch v.(type) {
		case nil, int64, float64, string, []byte, bool:
		default:
			cv, err := driver.DefaultParameterConverter.ConvertValue(v)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %w", i+1, err)
			}
			v = cv
		}
		args[i].Value = v
	}
	return args, nil
}

// exec runs the statement with vals.
func (s *dstmt) exec(vals []any) (driver.Result, error) {
	args, err := s.bind(vals)
	if err != nil {
		return nil, err
	}
	defer clearValues(args)
	return s.st.(driver.StmtExecContext).ExecContext(s.ctx, args)
}

// query runs the statement with vals; the caller closes the rows.
func (s *dstmt) query(vals ...any) (driver.Rows, error) {
	args, err := s.bind(vals)
	if err != nil {
		return nil, err
	}
	defer clearValues(args)
	return s.st.(driver.StmtQueryContext).QueryContext(s.ctx, args)
}

// queryInt64 runs the statement with vals and returns the first column of its one row.
func (s *dstmt) queryInt64(vals ...any) (int64, error) {
	rows, err := s.query(vals...)
	if err != nil {
		return 0, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	err = rows.Next(dest)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, io.EOF) {
		return 0, sql.ErrNoRows
	}
	if err != nil {
		return 0, err
	}
	id, ok := dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("store: want an integer, got %T", dest[0])
	}
	return id, nil
}

func (s *dstmt) close() {
	if s != nil {
		s.st.Close()
	}
}

// clearValues drops the argument values, so a statement's slice does not keep a slice's
// strings and blobs alive until the next execution.
func clearValues(args []driver.NamedValue) {
	for i := range args {
		args[i].Value = nil
	}
}
