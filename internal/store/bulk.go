package store

import (
	"database/sql"
	"fmt"
	"math/bits"
	"strings"
)

// bulkChunkParams caps the parameters of one multi-row INSERT (SQLite allows 32766). Each
// prepared size holds a VDBE program proportional to it: 1024 measured ~15 MiB more peak RSS than
// 256 in BenchmarkProject with no clear CPU difference on a noisy machine; 512 splits the two.
const bulkChunkParams = 512

// bulkInsert batches rows into multi-row INSERT statements: one statement execution per chunk
// instead of one per row is most of the insert speed through database/sql. Statements for
// 1, 2, 4, ... chunk rows are prepared up front — database/sql cannot prepare on a connection
// while a transaction holds it — and a remainder of r rows runs as the binary digits of r.
type bulkInsert struct {
	cols  int
	chunk int         // a power of two
	stmts []*sql.Stmt // stmts[k] inserts 1<<k rows
	args  []any
	rows  int
	// lastID is the rowid of the last row the last statement inserted.
	lastID int64
}

func newBulkInsert(db *sql.DB, table string, cols ...string) (*bulkInsert, error) {
	return newBulk(db, "INSERT INTO", table, cols...)
}

// newBulk is newBulkInsert with another verb ("INSERT OR REPLACE INTO").
func newBulk(db *sql.DB, verb, table string, cols ...string) (*bulkInsert, error) {
	b := &bulkInsert{cols: len(cols)}
	b.chunk = 1 << (bits.Len(uint(max(1, bulkChunkParams/len(cols)))) - 1)
	prefix := verb + " " + table + "(" + strings.Join(cols, ",") + ") VALUES "
	tuple := "(" + strings.Repeat("?,", len(cols)-1) + "?)"
	for n := 1; n <= b.chunk; n *= 2 {
		var sb strings.Builder
		sb.WriteString(prefix)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(tuple)
		}
		st, err := db.Prepare(sb.String())
		if err != nil {
			b.close()
			return nil, fmt.Errorf("prepare insert into %s: %w", table, err)
		}
		b.stmts = append(b.stmts, st)
	}
	return b, nil
}

// add queues one row (len(vals) must equal the column count), flushing a full chunk into tx.
func (b *bulkInsert) add(tx *sql.Tx, vals ...any) error {
	b.args = append(b.args, vals...)
	b.rows++
	if b.rows == b.chunk {
		return b.flush(tx)
	}
	return nil
}

// flush inserts the queued rows into tx.
func (b *bulkInsert) flush(tx *sql.Tx) error {
	defer b.reset()
	args := b.args
	for k := len(b.stmts) - 1; k >= 0 && b.rows > 0; k-- {
		n := 1 << k
		if b.rows&n == 0 {
			continue
		}
		res, err := tx.Stmt(b.stmts[k]).Exec(args[:n*b.cols]...)
		if err != nil {
			return err
		}
		if b.lastID, err = res.LastInsertId(); err != nil {
			return err
		}
		args = args[n*b.cols:]
		b.rows -= n
	}
	return nil
}

// reset drops queued rows.
func (b *bulkInsert) reset() {
	clear(b.args)
	b.args = b.args[:0]
	b.rows = 0
}

func (b *bulkInsert) close() {
	for _, st := range b.stmts {
		st.Close()
	}
}
