package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// Retention of resources, scopes and metric streams. Rows name them by id, deduplicated by hash,
// and once retention has deleted every row that named one it only takes room: a load whose pods
// come and go (each a resource with its own metric streams) would grow these tables without
// bound. The projector caches hash → id across slices (resCache, scopeCache, metricCache), so
// an id may be deleted only if no row names it, no row the projector is about to write will,
// and no cache entry can hand it out afterwards. A sweep of a database does that in bounded
// steps:
//
//  1. Begin, under the projector connection's lock, so between two slices: note the highest id
//     of each id table and the highest rowid of each table whose rows name ids. From then on the
//     projector notes every id it resolves for a slice (idSweep.use, under the same lock).
//  2. Scan the naming rows at or below the noted rowids, sweepScanStep of them a step, and keep
//     the ids they name. Those rows are never updated, only deleted, so a row that retention
//     deletes meanwhile only keeps its ids one sweep longer. Rows written after the begin name
//     ids the projector resolved, which it noted.
//  3. Delete, retainStep a step, every id below the noted highest that no scanned row named and
//     the projector did not use, and hand the deleted ids' hashes to the projector, which drops
//     them from its caches before it resolves the next slice's ids (idSweep.drop). A step holds
//     the lock under which the projector resolves ids and commits, so a delete and a use are
//     ordered: the projector never writes a deleted id, and a deleted resource staged again is
//     inserted again, under a new id.
//
// The newest id of each table is never deleted, so SQLite's next id stays above every deleted
// one and an id never names two resources in turn. A metric stream goes before the resource and
// scope it names are scanned again, so those follow one sweep later, which a sweep that deleted
// metric streams always calls for. A sweep begins once every sweepEvery at most, and only after
// retention deleted rows since the last (or it deleted metric streams): it reads each kept
// row once, so with a quarter of the retention between sweeps each row is read about four
// times in its life, against once written and indexed.

// idKind is a table of deduplicated rows that others name by id.
type idKind int

const (
	kindResource idKind = iota
	kindScope
	kindMetric
	numKinds
)

// idTables are the tables of the kinds, in idKind order.
var idTables = [numKinds]string{"resources", "scopes", "metrics"}

// sweepScanStep bounds the rows one scan step reads.
const sweepScanStep = 4 * retainStep

// idRef is a column of a table whose rows name ids of a kind.
type idRef struct {
	col  string
	kind idKind
}

// refTable is a table whose rows name ids, in the databases holding part.
type refTable struct {
	name string
	part schema.Parts
	refs []idRef
}

var refTables = func() []refTable {
	owners := []idRef{{"resource_id", kindResource}, {"scope_id", kindScope}}
	ts := []refTable{
		{name: "logs", part: schema.LogsMetrics, refs: owners},
		{name: "spans", part: schema.Traces, refs: owners},
		{name: "metrics", part: schema.LogsMetrics, refs: owners},
	}
	for _, t := range schema.PointTables {
		ts = append(ts, refTable{name: t, part: schema.LogsMetrics, refs: []idRef{{"metric_id", kindMetric}}})
	}
	return ts
}()

// kindIn reports whether a database holding ps has the table of kind k.
func kindIn(k idKind, ps schema.Parts) bool { return k != kindMetric || ps&schema.LogsMetrics != 0 }

// sweepPhase is where a sweep of a database stands.
type sweepPhase int

const (
	sweepIdle sweepPhase = iota
	sweepScanning
	sweepDeleting
)

// idSweep is the state of a database's sweep. Every field but began and deletedAt (the
// retainer's own) is shared with the projector under the database's connection lock.
type idSweep struct {
	phase   sweepPhase
	top     [numKinds]int64              // ids above are never deleted by this sweep
	kept    [numKinds]map[int64]struct{} // ids at or below top that a row names or the projector used
	scanTo  []int64                      // per refTable: the highest rowid at the begin
	scanAt  []int64                      // per refTable: the rowid scanned up to
	delAt   [numKinds]int64              // ids at or below were decided
	retired [numKinds][][16]byte         // hashes of deleted ids, for the projector to drop

	began     time.Time        // when the last sweep began
	deletedAt uint64           // retainState.deleted then
	deleted   [numKinds]uint64 // ids deleted by this sweep
}

// drop removes the retired hashes from the projector's caches. The projector calls it, holding
// the connection's lock, before it resolves a slice's ids.
func (w *idSweep) drop(caches [numKinds]map[[16]byte]int64) {
	for k := range w.retired {
		for _, h := range w.retired[k] {
			delete(caches[k], h)
		}
		w.retired[k] = w.retired[k][:0]
	}
}

// use notes the ids the projector resolved for a slice, holding the connection's lock, so that
// the sweep under way keeps them.
func (w *idSweep) use(ids [numKinds][]int64) {
	if w.phase == sweepIdle {
		return
	}
	for k, list := range ids {
		for _, id := range list {
			if id <= w.top[k] {
				w.kept[k][id] = struct{}{}
			}
		}
	}
}

// sweepEvery is the least time between the beginnings of two sweeps.
func (c Config) sweepEvery() time.Duration { return max(c.markEvery(), c.Retention/4) }

// sweepStep advances sh's sweep by one step and reports whether there is more to do at once.
func (s *Store) sweepStep(sh *shard) (bool, error) {
	w := &s.retain.sweeps[sh.index]
	var more bool
	err := sh.conn.Do(func(c *sqlitec.Conn) error {
		var err error
		switch w.phase {
		case sweepIdle:
			deleted := s.retain.deleted.Load()
			if deleted == w.deletedAt && w.deleted[kindMetric] == 0 || time.Since(w.began) < s.cfg.sweepEvery() {
				return nil // nothing was deleted since the last sweep that could free an id
			}
			w.began, w.deletedAt = time.Now(), deleted
			more, err = true, w.begin(c, sh.parts)
		case sweepScanning:
			more, err = true, w.scan(c, sh.parts)
		case sweepDeleting:
			if more, err = w.deleteStep(c, sh.parts); err == nil && !more {
				s.cfg.Logger.Debug("store: retention: swept unused ids", "db", sh.name, "took", time.Since(w.began),
					"resources", w.deleted[kindResource], "scopes", w.deleted[kindScope], "metrics", w.deleted[kindMetric])
			}
		}
		if err != nil {
			w.end()
		}
		return err
	})
	return more, err
}

// begin notes the highest ids and rowids and starts the scan.
func (w *idSweep) begin(c *sqlitec.Conn, ps schema.Parts) error {
	w.deleted = [numKinds]uint64{}
	for k := range numKinds {
		w.kept[k] = map[int64]struct{}{}
		w.delAt[k], w.top[k] = 0, 0
		if !kindIn(k, ps) {
			continue
		}
		top, err := c.QueryInt64(`SELECT COALESCE(max(rowid), 0) FROM ` + idTables[k])
		if err != nil {
			return fmt.Errorf("read the newest id of %s: %w", idTables[k], err)
		}
		w.top[k] = top - 1 // the newest id is kept
	}
	w.scanTo, w.scanAt = make([]int64, len(refTables)), make([]int64, len(refTables))
	for i, t := range refTables {
		if ps&t.part == 0 {
			continue
		}
		top, err := c.QueryInt64(`SELECT COALESCE(max(rowid), 0) FROM ` + t.name)
		if err != nil {
			return fmt.Errorf("read the newest row of %s: %w", t.name, err)
		}
		w.scanTo[i] = top
	}
	w.phase = sweepScanning
	return nil
}

// scan reads up to sweepScanStep naming rows and keeps the ids they name; past the last it
// turns to deleting.
func (w *idSweep) scan(c *sqlitec.Conn, ps schema.Parts) error {
	for i, t := range refTables {
		if ps&t.part == 0 || w.scanAt[i] >= w.scanTo[i] {
			continue
		}
		q := "SELECT rowid"
		for _, r := range t.refs {
			q += ", " + r.col
		}
		q += fmt.Sprintf(" FROM %s WHERE rowid > %d AND rowid <= %d ORDER BY rowid LIMIT %d", t.name, w.scanAt[i], w.scanTo[i], sweepScanStep)
		n := 0
		err := query(c, q, func(r *sqlitec.Rows) {
			n++
			w.scanAt[i] = r.Int64(0)
			for j, ref := range t.refs {
				if id := r.Int64(1 + j); id <= w.top[ref.kind] {
					w.kept[ref.kind][id] = struct{}{}
				}
			}
		})
		if err != nil {
			return fmt.Errorf("scan %s: %w", t.name, err)
		}
		if n < sweepScanStep {
			w.scanAt[i] = w.scanTo[i]
		}
		return nil
	}
	w.phase = sweepDeleting
	return nil
}

// deleteStep deletes, in one transaction, up to retainStep unnamed ids of each kind, and
// retires their hashes. It reports whether ids are left to decide.
func (w *idSweep) deleteStep(c *sqlitec.Conn, ps schema.Parts) (more bool, err error) {
	if err := c.Exec("BEGIN IMMEDIATE"); err != nil {
		return false, err
	}
	defer func() {
		if err == nil {
			err = c.Exec("COMMIT")
		}
		if err != nil {
			_ = c.Exec("ROLLBACK")
		}
	}()
	for k := range numKinds {
		if !kindIn(k, ps) || w.delAt[k] >= w.top[k] {
			continue
		}
		var ids []string
		var hashes [][16]byte
		n := 0
		q := fmt.Sprintf(`SELECT id, hash FROM %s WHERE id > %d AND id <= %d ORDER BY id LIMIT %d`, idTables[k], w.delAt[k], w.top[k], retainStep)
		err := query(c, q, func(r *sqlitec.Rows) {
			n++
			id := r.Int64(0)
			w.delAt[k] = id
			if _, ok := w.kept[k][id]; ok {
				return
			}
			ids = append(ids, strconv.FormatInt(id, 10))
			var h [16]byte
			copy(h[:], r.Bytes(1))
			hashes = append(hashes, h)
		})
		if err != nil {
			return false, fmt.Errorf("list %s: %w", idTables[k], err)
		}
		if n < retainStep {
			w.delAt[k] = w.top[k]
		}
		more = more || w.delAt[k] < w.top[k]
		if len(ids) == 0 {
			continue
		}
		if err := c.Exec(`DELETE FROM ` + idTables[k] + ` WHERE id IN (` + strings.Join(ids, ",") + `)`); err != nil {
			return false, fmt.Errorf("delete from %s: %w", idTables[k], err)
		}
		// Retired even if the transaction rolls back: a hash dropped from a cache for nothing
		// costs the projector one upsert, which finds the row again.
		w.retired[k] = append(w.retired[k], hashes...)
		w.deleted[k] += uint64(len(ids))
	}
	if !more {
		w.end()
	}
	return more, nil
}

// end closes the sweep; the retired hashes stay for the projector to drop.
func (w *idSweep) end() {
	w.phase = sweepIdle
	w.kept = [numKinds]map[int64]struct{}{}
	w.scanTo, w.scanAt = nil, nil
}

// query runs q on c and calls row for each row.
func query(c *sqlitec.Conn, q string, row func(r *sqlitec.Rows)) error {
	return c.QueryRows(q, func(r *sqlitec.Rows) error {
		row(r)
		return nil
	})
}
