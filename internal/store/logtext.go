package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LogTextShift sizes the groups log_text indexes: one document per 1<<LogTextShift consecutive
// log ids, rowid = id >> LogTextShift. A match names a group; its rows are the candidates.
const LogTextShift = 4

// groupBodiesSQL reads the bodies a group already holds below an id, in document order.
const groupBodiesSQL = `SELECT body FROM logs WHERE id >= ? AND id < ? AND body != '' ORDER BY id`

// newTextInsert prepares the bulk REPLACE of log_text documents (rowid, body): a group that a
// later slice completes gets its whole text again, which replaces the partial document.
func newTextInsert(db *sql.DB, errs *[]error) *bulkInsert {
	b, err := newBulk(db, "INSERT OR REPLACE INTO", "log_text", "rowid", "body")
	*errs = append(*errs, err)
	return b
}

// textIndexer builds the log_text documents of a slice's logs.
type textIndexer struct {
	buf []byte
}

// index writes the documents of the groups logs (in id order) touch. The first group may have
// begun in an earlier slice: its earlier bodies are read back, so the new document holds the
// whole group.
func (x *textIndexer) index(tx *sql.Tx, ins *inserts, logs []logRow) error {
	if len(logs) == 0 {
		return nil
	}
	x.buf = x.buf[:0]
	g := logs[0].id >> LogTextShift
	if start := g << LogTextShift; start < logs[0].id {
		var err error
		if x.buf, err = appendGroupBodies(x.buf, tx.Stmt(ins.groupBodies), start, logs[0].id); err != nil {
			return err
		}
	}
	for i := range logs {
		l := &logs[i]
		if l.id>>LogTextShift != g {
			if err := x.flush(tx, ins.text, g); err != nil {
				return err
			}
			g = l.id >> LogTextShift
		}
		if l.body != "" {
			x.buf = append(x.buf, l.body...)
			x.buf = append(x.buf, '\n')
		}
	}
	if err := x.flush(tx, ins.text, g); err != nil {
		return err
	}
	return ins.text.flush(tx)
}

// flush queues the document of group g (none for a group without text).
func (x *textIndexer) flush(tx *sql.Tx, text *bulkInsert, g int64) error {
	if len(x.buf) == 0 {
		return nil
	}
	err := text.add(tx, g, string(x.buf))
	x.buf = x.buf[:0]
	return err
}

// appendGroupBodies appends the document text of the logs with from <= id < to.
func appendGroupBodies(buf []byte, stmt *sql.Stmt, from, to int64) ([]byte, error) {
	rows, err := stmt.Query(from, to)
	if err != nil {
		return buf, fmt.Errorf("read group bodies: %w", err)
	}
	defer rows.Close()
	var body sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&body); err != nil {
			return buf, fmt.Errorf("read group bodies: %w", err)
		}
		buf = append(buf, body...)
		buf = append(buf, '\n')
	}
	if err := rows.Err(); err != nil {
		return buf, fmt.Errorf("read group bodies: %w", err)
	}
	return buf, nil
}

// textStep is how many groups one transaction of catchUpLogText indexes (a variable for tests).
var textStep int64 = 2048

// catchUpLogText moves a database of schema version 3 or older, whose log bodies are indexed
// per row in logs_fts, to log_text: it indexes every group in bounded steps, then drops
// logs_fts. Each step is one transaction and REPLACEs its groups, so an interrupted upgrade
// resumes at the next Open from the last group written.
func catchUpLogText(ctx context.Context, db *sql.DB) error {
	var old int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'logs_fts'`).Scan(&old); err != nil {
		return classify("look for logs_fts", err)
	}
	if old == 0 {
		return nil
	}
	var next, last int64
	err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(rowid) FROM log_text), 0),
		coalesce((SELECT max(id) FROM logs), 0) >> `+fmt.Sprint(LogTextShift)).Scan(&next, &last)
	if err != nil {
		return classify("read log text state", err)
	}
	for ; next <= last; next += textStep {
		if err := indexGroups(ctx, db, next, min(next+textStep, last+1)); err != nil {
			return classify("index log bodies", err)
		}
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE logs_fts`); err != nil {
		return classify("drop logs_fts", err)
	}
	return nil
}

// indexGroups writes the log_text documents of groups [lo, hi) in one transaction.
func indexGroups(ctx context.Context, db *sql.DB, lo, hi int64) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	rows, err := tx.QueryContext(ctx, `SELECT id, body FROM logs WHERE id >= ? AND id < ? AND body != '' ORDER BY id`,
		lo<<LogTextShift, hi<<LogTextShift)
	if err != nil {
		return err
	}
	type doc struct {
		g    int64
		text []byte
	}
	var docs []doc
	var id int64
	var body sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &body); err != nil {
			rows.Close()
			return err
		}
		if g := id >> LogTextShift; len(docs) == 0 || docs[len(docs)-1].g != g {
			docs = append(docs, doc{g: g})
		}
		d := &docs[len(docs)-1]
		d.text = append(append(d.text, body...), '\n')
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO log_text(rowid, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, d := range docs {
		if _, err := stmt.ExecContext(ctx, d.g, string(d.text)); err != nil {
			return err
		}
	}
	return tx.Commit()
}
