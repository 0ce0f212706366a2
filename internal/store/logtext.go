package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/otelbench/otelbench/internal/diskfull"
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

// addTextRows adds to d the (id, body) rows of groupBodiesSQL over [from, to).
func addTextRows(ctx context.Context, d *stage.TextDocs, stmt *sql.Stmt, from, to int64) error {
	rows, err := stmt.QueryContext(ctx, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id int64
	var body sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &body); err != nil {
			return err
		}
		if err := d.Add(id, string(body)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// addConnTextRows is addTextRows on the projector's connection.
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

// textStep is how many groups one transaction of catchUpLogFTS indexes (a variable for tests).
var textStep int64 = 2048

// catchUpLogText is the schema's LogTextCatchUp: catchUpLogFTS, then, for a database not just
// created, catchUpLogGrams.
func catchUpLogText(ctx context.Context, db *sql.DB, fresh bool, version int) error {
	if err := catchUpLogFTS(ctx, db); err != nil {
		return err
	}
	if fresh {
		return nil
	}
	return catchUpLogGrams(ctx, db, version)
}

// catchUpLogFTS moves a database of schema version 3 or older, whose log bodies are indexed
// per row in logs_fts, to log_text: it indexes every group in bounded steps, then drops
// logs_fts. Each step is one transaction and REPLACEs its groups, so an interrupted upgrade
// resumes at the next Open from the last group written.
func catchUpLogFTS(ctx context.Context, db *sql.DB) error {
	var old int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'logs_fts'`).Scan(&old); err != nil {
		return diskfull.Classify("look for logs_fts", err)
	}
	if old == 0 {
		return nil
	}
	if err := indexFrom(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE logs_fts`); err != nil {
		return diskfull.Classify("drop logs_fts", err)
	}
	return nil
}

// catchUpLogGrams moves a database of schema version 6 or older to log_text documents of
// trigram tokens (textgrams.go): a log_text of the trigram tokenizer, whose documents held the
// groups' bodies, is dropped and created anew, and every group is indexed again in bounded
// steps. Until the version moves to 7 an interrupted rebuild resumes at the next Open from the
// last group written.
func catchUpLogGrams(ctx context.Context, db *sql.DB, version int) error {
	if version >= 7 {
		return nil
	}
	var def string
	if err := db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'log_text'`).Scan(&def); err != nil {
		return diskfull.Classify("read the log_text definition", err)
	}
	if strings.Contains(def, "'trigram'") {
		if _, err := db.ExecContext(ctx, `DROP TABLE log_text`); err != nil {
			return diskfull.Classify("drop the trigram log_text", err)
		}
		if _, err := db.ExecContext(ctx, schema.LogsMetricsSQL()); err != nil { // creates log_text anew
			return diskfull.Classify("create log_text", err)
		}
	}
	return indexFrom(ctx, db)
}

// indexFrom indexes the groups from the last one log_text holds to the last one with logs, in
// steps of textStep groups.
func indexFrom(ctx context.Context, db *sql.DB) error {
	var next, last int64
	err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(rowid) FROM log_text), 0),
		coalesce((SELECT max(id) FROM logs), 0) >> `+fmt.Sprint(schema.LogTextShift)).Scan(&next, &last)
	if err != nil {
		return diskfull.Classify("read log text state", err)
	}
	for ; next <= last; next += textStep {
		if err := indexGroups(ctx, db, next, min(next+textStep, last+1)); err != nil {
			return diskfull.Classify("index log bodies", err)
		}
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
	read, err := tx.PrepareContext(ctx, groupBodiesSQL)
	if err != nil {
		return err
	}
	defer read.Close()
	write, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO log_text(rowid, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer write.Close()
	// Read all, then write: the rows must be closed before the connection takes the next
	// statement. One step's documents are bounded by textStep groups.
	type doc struct {
		g    int64
		text string
	}
	var docs []doc
	d := stage.TextDocs{Emit: func(g int64, text string) error {
		docs = append(docs, doc{g, text})
		return nil
	}}
	if err := addTextRows(ctx, &d, read, lo<<schema.LogTextShift, hi<<schema.LogTextShift); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	for _, doc := range docs {
		if _, err := write.ExecContext(ctx, doc.g, doc.text); err != nil {
			return err
		}
	}
	return tx.Commit()
}
