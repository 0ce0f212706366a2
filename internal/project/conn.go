package project

import (
	"sync"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// The projector's connection to telemetry.db (or traces.db) that commits its slices is a
// sqlitec connection, not a database/sql one (the raw log is read from its segment files): catch-up is bound by
// the committing thread, and through modernc.org/sqlite's driver it spent ~14% of its time
// binding parameters (a C allocation, a copy and a free per text, a name lookup per parameter)
// and ~9% in the connection mutex the driver always opens with. Through database/sql before that
// it also allocated a []driver.NamedValue per statement execution and converted every argument.
// Statements are prepared on a connection once, on first use, and closed with the projector.

// Conn is one sqlitec connection and the lock that keeps it to one goroutine at a time (it is
// opened without SQLite's own mutex): the projector's thread, its boost worker and its stager
// take turns on it, and the store's retention runs its steps on it between two slices.
type Conn struct {
	mu sync.Mutex
	c  *sqlitec.Conn
}

// OpenConn opens the database at path with schema.ConnPragmas and then pragmas.
func OpenConn(path string, pragmas ...string) (*Conn, error) {
	c, err := sqlitec.Open(path, append(append([]string(nil), schema.ConnPragmas...), pragmas...)...)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
}

// Do runs f on the connection, holding it.
func (c *Conn) Do(f func(c *sqlitec.Conn) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return f(c.c)
}

// Close closes the connection; a nil Conn is closed already.
func (c *Conn) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.Close()
}
