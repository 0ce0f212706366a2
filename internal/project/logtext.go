package project

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
	"github.com/otelbench/otelbench/internal/stage"
)

// groupBodiesSQL reads the logs with a body whose ids lie in [?, ?), in document order.
const groupBodiesSQL = `SELECT id, body FROM logs WHERE id >= ? AND id < ? AND body != '' ORDER BY id`

// newTextInsert prepares the bulk REPLACE of log_text documents (rowid, body): a group that a
// later slice completes gets its whole text again, which replaces the partial document.
func newTextInsert(c *sqlitec.Conn, errs *[]error) *connBulk {
	b, err := newConnBulk(c, "INSERT OR REPLACE INTO", "log_text", "rowid", "body")
	*errs = append(*errs, err)
	return b
}

// addConnTextRows adds to d the (id, body) rows of groupBodiesSQL over [from, to), read on
// the projector's connection.
func addConnTextRows(d *stage.TextDocs, stmt *sqlitec.Stmt, from, to int64) error {
	rows, err := stmt.Query(from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	for {
		ok, err := rows.Next()
		if err != nil || !ok {
			return err
		}
		if err := d.Add(rows.Int64(0), rows.Text(1)); err != nil {
			return err
		}
	}
}

// textIndexer writes the log_text documents of a projection slice.
type textIndexer struct {
	docs stage.TextDocs
}

// index writes the documents of the groups st's logs touch: the ones the stager built
// (packTexts) and, when the first group began in an earlier slice, that group's, from its
// earlier bodies read back and the slice's, so the new document holds the whole group.
func (x *textIndexer) index(ins *inserts, st *slice) error {
	logs := st.Logs
	if len(logs) == 0 {
		return nil
	}
	if st.TextFrom > 0 {
		x.docs.Emit = func(g int64, text string) error { return ins.text.add(sqlitec.Int(g), sqlitec.Text(text)) }
		// The read-back stays inside the group, so emit (which may execute a bulk insert on
		// this connection) is not called while its rows are open.
		start := logs[0].ID >> schema.LogTextShift << schema.LogTextShift
		if err := addConnTextRows(&x.docs, ins.groupBodies, start, logs[0].ID); err != nil {
			return fmt.Errorf("read group bodies: %w", err)
		}
		for i := range logs[:st.TextFrom] {
			if err := x.docs.Add(logs[i].ID, logs[i].Body); err != nil {
				return err
			}
		}
		if err := x.docs.Finish(); err != nil {
			return err
		}
	}
	for _, d := range st.Texts {
		if err := ins.text.add(sqlitec.Int(d.G), sqlitec.Text(d.Text)); err != nil {
			return err
		}
	}
	return ins.text.flush()
}
