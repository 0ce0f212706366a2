package project

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/otelbench/otelbench/internal/sqlitec"
)

// bulkChunkParams caps the parameters of one multi-row INSERT (SQLite allows 32766). Each
// prepared size holds a VDBE program proportional to it: 1024 measured ~15 MiB more peak RSS than
// 256 in BenchmarkProject with no clear CPU difference on a noisy machine; 512 splits the two.
const bulkChunkParams = 512

// bulkRows batches rows into multi-row INSERT statements: one statement execution per chunk
// instead of one per row is most of the insert speed. Statements for 1, 2, 4, ... chunk rows
// are prepared up front (bulkSQL), and a remainder of r rows runs as the binary digits of r.
// connBulk runs them on a sqlitec connection (conn.go).
type bulkRows[T any] struct {
	cols  int
	chunk int // a power of two
	args  []T
	rows  int
	// lastID is the rowid of the last row the last statement inserted.
	lastID int64
}

// bulkSQL returns the statements a bulkRows of cols columns runs: stmts[k] inserts 1<<k rows.
func bulkSQL[T any](verb, table string, cols ...string) (b bulkRows[T], stmts []string) {
	b = bulkRows[T]{cols: len(cols)}
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
		stmts = append(stmts, sb.String())
	}
	return b, stmts
}

// queue adds one row (len(vals) must equal the column count) and reports whether a chunk is full.
func (b *bulkRows[T]) queue(vals []T) bool {
	b.args = append(b.args, vals...)
	b.rows++
	return b.rows == b.chunk
}

// flushWith inserts the queued rows, running statement k (1<<k rows) with exec, which returns
// the last inserted rowid.
func (b *bulkRows[T]) flushWith(exec func(k int, args []T) (int64, error)) error {
	defer b.reset()
	args := b.args
	for k := bits.Len(uint(b.chunk)) - 1; k >= 0 && b.rows > 0; k-- {
		n := 1 << k
		if b.rows&n == 0 {
			continue
		}
		id, err := exec(k, args[:n*b.cols])
		if err != nil {
			return err
		}
		b.lastID = id
		args = args[n*b.cols:]
		b.rows -= n
	}
	return nil
}

// reset drops queued rows.
func (b *bulkRows[T]) reset() {
	clear(b.args)
	b.args = b.args[:0]
	b.rows = 0
}

// connBulk is bulkRows on the projector's sqlitec connection (conn.go). Its rows are
// sqlitec.Args: passed as []any, each int64 and string of each row was allocated on the heap
// (~4% of the committing thread in a catch-up).
type connBulk struct {
	bulkRows[sqlitec.Arg]
	stmts []*sqlitec.Stmt
}

// newConnBulk prepares the statements of a connBulk on c.
func newConnBulk(c *sqlitec.Conn, verb, table string, cols ...string) (*connBulk, error) {
	rows, queries := bulkSQL[sqlitec.Arg](verb, table, cols...)
	b := &connBulk{bulkRows: rows}
	for _, q := range queries {
		st, err := c.Prepare(q)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("prepare insert into %s: %w", table, err)
		}
		b.stmts = append(b.stmts, st)
	}
	return b, nil
}

// add queues one row, flushing a full chunk into the connection's transaction.
func (b *connBulk) add(vals ...sqlitec.Arg) error {
	if b.queue(vals) {
		return b.flush()
	}
	return nil
}

// flush inserts the queued rows.
func (b *connBulk) flush() error {
	return b.flushWith(func(k int, args []sqlitec.Arg) (int64, error) {
		return b.stmts[k].ExecArgs(args)
	})
}

func (b *connBulk) close() {
	for _, st := range b.stmts {
		st.Close()
	}
}
