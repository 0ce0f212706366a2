package sqlitec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"
)

// TestCloseOpenStatements: Close finalizes the statements still open and names them, and the
// connection really closes. The sign of a real close on a WAL database is its -wal file: the
// last connection to close checkpoints and deletes it, while a zombie connection
// (sqlite3_close_v2 with statements unfinalized) keeps it.
func TestCloseOpenStatements(t *testing.T) {
	tests := []struct {
		name    string
		queries []string // prepared and left open
		reading bool     // the first is mid-query, a row read and its Rows not closed
		want    []string // named in the error, in order
	}{
		{name: "none"},
		{name: "one", queries: []string{`SELECT 1`}, want: []string{`"SELECT 1"`}},
		{
			name:    "two, one mid-query",
			queries: []string{`SELECT id FROM t`, `INSERT INTO t(i) VALUES (?)`},
			reading: true,
			want:    []string{`"INSERT INTO t(i) VALUES (?)"`, `"SELECT id FROM t"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, path := openTest(t)
			if err := c.Exec(`INSERT INTO t(i) VALUES (1), (2)`); err != nil {
				t.Fatal(err)
			}
			stmts := make([]*Stmt, len(tt.queries))
			for i, q := range tt.queries {
				st, err := c.Prepare(q)
				if err != nil {
					t.Fatal(err)
				}
				stmts[i] = st
			}
			if tt.reading {
				rows, err := stmts[0].Query()
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := rows.Next(); !ok || err != nil {
					t.Fatalf("next: got %v, %v; want a row", ok, err)
				}
			}
			err := c.Close()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("close: got %v, want nil", err)
				}
			} else {
				if !errors.Is(err, ErrOpenStatements) {
					t.Fatalf("close: got %v, want ErrOpenStatements", err)
				}
				if got := err.Error(); !strings.Contains(got, strings.Join(tt.want, ", ")) {
					t.Errorf("close: got %q, want it to name %s", got, strings.Join(tt.want, ", "))
				}
			}
			if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("-wal file after close: got %v, want it removed (the connection still open?)", err)
			}
			for i, st := range stmts {
				if st.p != 0 || st.arena != 0 {
					t.Errorf("statement %d after close: got p=%#x arena=%#x, want both freed", i, st.p, st.arena)
				}
				if err := st.Close(); err != nil {
					t.Errorf("statement %d closed again: got %v, want nil", i, err)
				}
				if _, err := st.Exec(); !errors.Is(err, errClosed) {
					t.Errorf("statement %d run after close: got %v, want errClosed", i, err)
				}
			}
		})
	}
}

// TestClosedStatementsForgotten: statements closed in their turn leave nothing for the
// connection's Close to report, however many were prepared (Conn.QueryInt64 prepares one a call).
func TestClosedStatementsForgotten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := c.QueryInt64(`SELECT ?`, i); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Prepare(`SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(c.stmts); got != 0 {
		t.Errorf("statements tracked after all closed: got %d, want 0", got)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: got %v, want nil", err)
	}
}

// TestFinalizeAndResetCodes: the codes of sqlite3_finalize and sqlite3_reset surface. Through
// this package's API a failed step is always reset at once, so the test steps the statement
// itself, as a caller's bug or a future path might, and leaves the failure for Close or
// Rows.Close to find.
func TestFinalizeAndResetCodes(t *testing.T) {
	failStep := func(t *testing.T, c *Conn) *Stmt {
		t.Helper()
		if err := c.Exec(`INSERT INTO t(u) VALUES ('taken')`); err != nil {
			t.Fatal(err)
		}
		st, err := c.Prepare(`INSERT INTO t(u) VALUES ('taken')`)
		if err != nil {
			t.Fatal(err)
		}
		if rc := sqlite3.Xsqlite3_step(c.tls, st.p); rc&0xff != sqlite3.SQLITE_CONSTRAINT {
			t.Fatalf("step: got %d, want SQLITE_CONSTRAINT", rc)
		}
		return st
	}
	t.Run("finalize", func(t *testing.T) {
		c, _ := openTest(t)
		err := failStep(t, c).Close()
		var e *Error
		if !errors.As(err, &e) || e.Code()&0xff != sqlite3.SQLITE_CONSTRAINT {
			t.Fatalf("close: got %v, want a constraint error", err)
		}
		if !strings.Contains(err.Error(), "finalize") {
			t.Errorf("close: got %q, want it to say finalize", err)
		}
		if got := len(c.stmts); got != 0 {
			t.Errorf("statements tracked after a failed finalize: got %d, want 0", got)
		}
	})
	t.Run("reset", func(t *testing.T) {
		c, _ := openTest(t)
		st := failStep(t, c)
		rows := &Rows{s: st}
		err := rows.Close()
		var e *Error
		if !errors.As(err, &e) || e.Code()&0xff != sqlite3.SQLITE_CONSTRAINT {
			t.Fatalf("rows close: got %v, want a constraint error", err)
		}
		if !strings.Contains(err.Error(), "reset") {
			t.Errorf("rows close: got %q, want it to say reset", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close after the reset: got %v, want nil", err)
		}
	})
}
