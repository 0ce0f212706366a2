package sqlitec

import (
	"bytes"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"
)

func openTest(t *testing.T) (*Conn, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	c, err := Open(path, "journal_mode = wal", "synchronous(normal)", "busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, f REAL, s TEXT, b BLOB, u TEXT UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	return c, path
}

func prepare(t *testing.T, c *Conn, q string) *Stmt {
	t.Helper()
	st, err := c.Prepare(q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRoundTrip binds every supported Go type, through Exec's []any and through ExecArgs'
// Args, reads each back through the driver (database/sql on the same file, another
// connection) and through Rows.
func TestRoundTrip(t *testing.T) {
	big := strings.Repeat("x", 100_000) // past the arena's first sizes
	rows := [][]any{
		{int64(math.MinInt64), 1.5, "hello", []byte{0, 1, 2}, "a"},
		{int(7), float64(-0.25), "", []byte{}, "b"},       // empty text and blob: not NULL
		{int32(-3), nil, big, []byte(big), nil},           // NULLs, a grown arena
		{uint32(math.MaxUint32), nil, "é\x00z", nil, "c"}, // an embedded NUL survives
		{true, nil, "short", []byte("again"), "d"},        // after the arena grew
		{false, nil, nil, nil, "e"},
	}
	// The same rows as Args, built by the constructors.
	args := [][]Arg{
		{Int(math.MinInt64), Float(1.5), Text("hello"), Blob([]byte{0, 1, 2}), Text("a")},
		{Int(7), Float(-0.25), Text(""), Blob([]byte{}), Text("b")},
		{Int(-3), Null(), Text(big), Blob([]byte(big)), Null()},
		{Int(math.MaxUint32), Null(), Text("é\x00z"), Blob(nil), Text("c")},
		{Bool(true), Null(), Text("short"), Blob([]byte("again")), Text("d")},
		{Bool(false), {}, Null(), Null(), Text("e")}, // the zero Arg is NULL
	}
	for _, mode := range []string{"Exec", "ExecArgs"} {
		t.Run(mode, func(t *testing.T) {
			c, path := openTest(t)
			ins := prepare(t, c, `INSERT INTO t(i, f, s, b, u) VALUES (?, ?, ?, ?, ?)`)
			var last int64
			for i := range rows {
				var id int64
				var err error
				if mode == "Exec" {
					id, err = ins.Exec(rows[i]...)
				} else {
					id, err = ins.ExecArgs(args[i])
				}
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				if id != last+1 {
					t.Fatalf("row %d: last insert rowid %d, want %d", i, id, last+1)
				}
				last = id
			}
			checkRoundTrip(t, c, path, big)
		})
	}
}

// checkRoundTrip reads back TestRoundTrip's rows.
// got is a row of t as the driver reads it.
type got struct {
	i     sql.NullInt64
	f     sql.NullFloat64
	s     sql.NullString
	b     []byte
	bNull bool
}

// checkRoundTrip checks the rows TestRoundTrip wrote through the driver, then through Rows.
func checkRoundTrip(t *testing.T, c *Conn, path, big string) {
	want := []got{
		{i: sql.NullInt64{Int64: math.MinInt64, Valid: true}, f: sql.NullFloat64{Float64: 1.5, Valid: true}, s: sql.NullString{String: "hello", Valid: true}, b: []byte{0, 1, 2}},
		{i: sql.NullInt64{Int64: 7, Valid: true}, f: sql.NullFloat64{Float64: -0.25, Valid: true}, s: sql.NullString{Valid: true}, b: []byte{}},
		{i: sql.NullInt64{Int64: -3, Valid: true}, s: sql.NullString{String: big, Valid: true}, b: []byte(big)},
		{i: sql.NullInt64{Int64: math.MaxUint32, Valid: true}, s: sql.NullString{String: "é\x00z", Valid: true}, bNull: true},
		{i: sql.NullInt64{Int64: 1, Valid: true}, s: sql.NullString{String: "short", Valid: true}, b: []byte("again")},
		{i: sql.NullInt64{Int64: 0, Valid: true}, bNull: true},
	}
	checkThroughDriver(t, path, want)
	checkThroughRows(t, c, want)
}

// checkThroughDriver reads t through database/sql, another connection, and compares with want.
func checkThroughDriver(t *testing.T, path string, want []got) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := db.Query(`SELECT i, f, s, b, b IS NULL FROM t ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var all []got
	for q.Next() {
		var g got
		if err := q.Scan(&g.i, &g.f, &g.s, &g.b, &g.bNull); err != nil {
			t.Fatal(err)
		}
		all = append(all, g)
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want) {
		t.Fatalf("%d rows, want %d", len(all), len(want))
	}
	for i := range want {
		g, w := all[i], want[i]
		if g.i != w.i || g.f != w.f || g.s != w.s || !bytes.Equal(g.b, w.b) || g.bNull != w.bNull { // the driver reads an empty blob as nil: b IS NULL tells them apart
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

// checkThroughRows reads t from id 2 through Rows' accessors and compares with want; then the
// statement runs again.
func checkThroughRows(t *testing.T, c *Conn, want []got) {
	sel := prepare(t, c, `SELECT id, s, b FROM t WHERE id >= ? ORDER BY id`)
	r, err := sel.Query(int64(2))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var buf []byte      // AppendBytes' buffer, grown from nothing across rows
	var values [][]byte // what it returned, each checked after the last row
	for {
		ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		id := r.Int64(0)
		ids = append(ids, id)
		w := want[id-1]
		if r.Text(1) != w.s.String || r.Null(1) != !w.s.Valid {
			t.Errorf("id %d: text %q (null %v), want %+v", id, r.Text(1), r.Null(1), w.s)
		}
		if b := r.Bytes(2); !bytes.Equal(b, w.b) || (b == nil) != w.bNull {
			t.Errorf("id %d: bytes %q, want %q (null %v)", id, b, w.b, w.bNull)
		}
		if n := r.Len(2); n != len(w.b) {
			t.Errorf("id %d: length %d, want %d", id, n, len(w.b))
		}
		var v []byte
		buf, v = r.AppendBytes(buf, 2)
		values = append(values, v)
	}
	for i, v := range values {
		if w := want[ids[i]-1]; !bytes.Equal(v, w.b) || (v == nil) != w.bNull {
			t.Errorf("id %d: appended bytes %q, want %q (null %v)", ids[i], v, w.b, w.bNull)
		}
	}
	if len(ids) != 5 || ids[0] != 2 || ids[4] != 6 {
		t.Errorf("ids %v, want 2..6", ids)
	}
	r.Close()
	// The statement runs again after its rows ended.
	r, err = sel.Query(int64(6))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Next(); !ok || err != nil || r.Int64(0) != 6 {
		t.Fatalf("second query: %v %v", ok, err)
	}
	r.Close()
}

func TestQueryInt64(t *testing.T) {
	c, _ := openTest(t)
	up := prepare(t, c, `INSERT INTO t(u) VALUES (?) ON CONFLICT(u) DO UPDATE SET u = excluded.u RETURNING id`)
	for i, tc := range []struct {
		u    string
		want int64
	}{{"x", 1}, {"y", 2}, {"x", 1}, {"z", 3}, {"y", 2}} {
		id, err := up.QueryInt64(tc.u)
		if err != nil || id != tc.want {
			t.Fatalf("upsert %d (%q): id %d, %v; want %d", i, tc.u, id, err, tc.want)
		}
	}
	none := prepare(t, c, `SELECT id FROM t WHERE u = ?`)
	if _, err := none.QueryInt64("nope"); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", err)
	}
}

// TestErrors: SQLite's errors keep their codes, and the statement runs again after one.
func TestErrors(t *testing.T) {
	c, _ := openTest(t)
	ins := prepare(t, c, `INSERT INTO t(u) VALUES (?)`)
	if _, err := ins.Exec("dup"); err != nil {
		t.Fatal(err)
	}
	_, err := ins.Exec("dup")
	var se *Error
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code()&0xff != sqlite3.SQLITE_CONSTRAINT {
		t.Fatalf("duplicate: %v (%T), want SQLITE_CONSTRAINT_UNIQUE", err, err)
	}
	if !strings.Contains(err.Error(), "UNIQUE constraint failed: t.u") {
		t.Errorf("message %q lacks SQLite's", err)
	}
	if _, err := ins.Exec("other"); err != nil {
		t.Fatalf("after an error: %v", err)
	}
	if _, err := ins.Exec(); err == nil || !strings.Contains(err.Error(), "0 arguments for 1 parameters") {
		t.Errorf("too few arguments: %v", err)
	}
	if _, err := ins.Exec(uint64(1)); err == nil || !strings.Contains(err.Error(), "cannot bind a uint64") {
		t.Errorf("unsupported type: %v", err)
	}
	if _, err := ins.ExecArgs([]Arg{Value(struct{}{})}); err == nil || !strings.Contains(err.Error(), "cannot bind a struct {}") {
		t.Errorf("unsupported type through Value: %v", err)
	}
	if _, err := ins.ExecArgs([]Arg{Text("a"), Text("b")}); err == nil || !strings.Contains(err.Error(), "2 arguments for 1 parameters") {
		t.Errorf("too many Args: %v", err)
	}
	if _, err := c.Prepare(`SELECT nope FROM t`); err == nil || !strings.Contains(err.Error(), "no such column: nope") {
		t.Errorf("bad query: %v", err)
	}
	if _, err := c.Prepare(`SELECT 1; SELECT 2`); err == nil || !strings.Contains(err.Error(), "more than one statement") {
		t.Errorf("two statements: %v", err)
	}
	if err := c.Exec(`INSERT INTO nope VALUES (1)`); !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_ERROR || !strings.Contains(err.Error(), "no such table: nope") {
		t.Errorf("exec: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir.db")); !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_CANTOPEN {
		t.Errorf("open in a missing directory: %v", err)
	}
	st := prepare(t, c, `SELECT 1`)
	st.Close()
	if _, err := st.Exec(); err == nil {
		t.Error("a closed statement ran")
	}
}

// TestTransactionAndStatus: a rolled back transaction leaves nothing, a committed one is seen
// by another connection, and the page counters count the commit's writes.
func TestTransactionAndStatus(t *testing.T) {
	c, path := openTest(t)
	ins := prepare(t, c, `INSERT INTO t(s) VALUES (?)`)
	if _, _, err := c.Status(sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, true); err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"ROLLBACK", "COMMIT"} {
		if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			if _, err := ins.Exec(strings.Repeat(end, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Exec(end); err != nil {
			t.Fatal(err)
		}
	}
	written, _, err := c.Status(sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, true)
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 rows of 600 bytes fill ~150 pages of 4 KiB.
	if written < 100 {
		t.Errorf("%d pages written, want the commit's ~150", written)
	}
	if again, _, _ := c.Status(sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, false); again != 0 {
		t.Errorf("counter not reset: %d", again)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, rolled int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE s LIKE 'ROLLBACK%') FROM t`).Scan(&n, &rolled); err != nil {
		t.Fatal(err)
	}
	if n != 1000 || rolled != 0 {
		t.Errorf("%d rows (%d rolled back), want the 1000 committed", n, rolled)
	}
}

// TestArenaTrimmed: a statement that bound more than maxKeptArena frees its arena after the
// execution, and one that bound less keeps it for the next.
func TestArenaTrimmed(t *testing.T) {
	c, _ := openTest(t)
	ins := prepare(t, c, `INSERT INTO t(s) VALUES (?)`)
	if _, err := ins.Exec("small"); err != nil {
		t.Fatal(err)
	}
	if ins.size == 0 || ins.size > maxKeptArena {
		t.Fatalf("arena of %d bytes after a small text", ins.size)
	}
	huge := strings.Repeat("y", 3*maxKeptArena)
	if _, err := ins.Exec(huge); err != nil {
		t.Fatal(err)
	}
	if ins.size != 0 || ins.arena != 0 {
		t.Errorf("arena of %d bytes kept after a %d-byte text", ins.size, len(huge))
	}
	if _, err := ins.Exec("again"); err != nil {
		t.Fatal(err)
	}
	sel := prepare(t, c, `SELECT length(s), s = ? FROM t WHERE id = 2`)
	r, err := sel.Query(huge)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Next(); !ok || err != nil || r.Int64(0) != int64(len(huge)) || r.Int64(1) != 1 {
		t.Fatalf("the huge text read back wrong: %v %v", ok, err)
	}
	r.Close()
	if sel.size != 0 {
		t.Errorf("query arena of %d bytes kept after its rows closed", sel.size)
	}
}

// TestClosed: a closed connection and its statements answer errors, not panics.
func TestClosed(t *testing.T) {
	c, _ := openTest(t)
	st, err := c.Prepare(`SELECT 1`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); !errors.Is(err, ErrOpenStatements) {
		t.Fatalf("close with a statement open: got %v, want ErrOpenStatements", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if err := c.Exec(`SELECT 1`); !errors.Is(err, errClosed) {
		t.Errorf("exec: %v", err)
	}
	if _, err := c.Prepare(`SELECT 1`); !errors.Is(err, errClosed) {
		t.Errorf("prepare: %v", err)
	}
	if _, _, err := c.Status(sqlite3.SQLITE_DBSTATUS_CACHE_WRITE, false); !errors.Is(err, errClosed) {
		t.Errorf("status: %v", err)
	}
	if _, err := st.QueryInt64(); !errors.Is(err, errClosed) {
		t.Errorf("statement of a closed connection: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing a statement after its connection: %v", err)
	}
}

func TestConnQueryInt64(t *testing.T) {
	c, _ := openTest(t)
	if n, err := c.QueryInt64(`SELECT ? + 1`, int64(41)); err != nil || n != 42 {
		t.Errorf("got %d, %v; want 42", n, err)
	}
	if _, err := c.QueryInt64(`SELECT 1 WHERE 0`); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v", err)
	}
	if _, err := c.QueryInt64(`SELECT nope`); err == nil {
		t.Error("a bad query read a row")
	}
}
