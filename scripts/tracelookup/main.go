// Command tracelookup prices, on a traces.db that `otelbench serve` projected, what finding a
// trace's span ids by its id costs through trace_chunks' primary key (what the query API does)
// against one seek of spans_trace_block per block of 4,096 span ids: what it would cost if
// trace_chunks were keyed by block first, as spans are. It checks that both give the same
// span ids, and prints the median and p90 of each over n trace ids sampled from the spans.
//
//	otelbench serve --data /tmp/big & otelbench load --mix traces=1 --records 10 --pool-size 1024 --duration 40s
//	go run ./scripts/tracelookup -db /tmp/big/traces.db -n 60 -rounds 3
package main

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	_ "modernc.org/sqlite"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/store"
)

func main() {
	path := flag.String("db", "otelbench-data/"+store.TracesFileName, "a projected traces.db (or telemetry.db of a one-file data directory)")
	n := flag.Int("n", 60, "trace ids to look up")
	rounds := flag.Int("rounds", 3, "times to look each of them up")
	flag.Parse()
	if _, err := measure(*path, *n, *rounds, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// chunkBounds finds the first and last span id of trace ?1 through trace_chunks' primary key
// (as internal/query's chunkBoundsSQL).
const chunkBounds = `SELECT (SELECT min(first_span_id) FROM trace_chunks WHERE trace_id = ?1),
	(SELECT last_span_id FROM trace_chunks WHERE trace_id = ?1 ORDER BY first_span_id DESC LIMIT 1)`

// blockBounds finds them with one seek of spans_trace_block for each block 0..?2.
var blockBounds = fmt.Sprintf(`WITH RECURSIVE b(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM b WHERE x < ?2)
	SELECT min((SELECT min(id) FROM spans INDEXED BY spans_trace_block WHERE (id >> %[1]d) = b.x AND trace_id = ?1)),
	       max((SELECT max(id) FROM spans INDEXED BY spans_trace_block WHERE (id >> %[1]d) = b.x AND trace_id = ?1)) FROM b`,
	schema.SpanBlockShift)

// result is what measure found: lookups made, the traces they found, and those whose two
// answers differed.
type result struct{ lookups, found, differ int }

// measure looks up n trace ids of the database at path both ways, rounds times, and writes the
// latencies to w.
func measure(path string, n, rounds int, w io.Writer) (result, error) {
	var res result
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return res, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var maxID sql.NullInt64
	if err := db.QueryRow(`SELECT max(id) FROM spans`).Scan(&maxID); err != nil {
		return res, fmt.Errorf("read spans: %w", err)
	}
	if !maxID.Valid {
		return res, errors.New("no spans")
	}
	ids, err := sampleTraces(db, maxID.Int64, n)
	if err != nil {
		return res, err
	}
	byKeyStmt, err := db.Prepare(chunkBounds)
	if err != nil {
		return res, fmt.Errorf("prepare: %w", err)
	}
	defer byKeyStmt.Close()
	byBlockStmt, err := db.Prepare(blockBounds)
	if err != nil {
		return res, fmt.Errorf("prepare: %w", err)
	}
	defer byBlockStmt.Close()
	blocks := maxID.Int64>>schema.SpanBlockShift + 1
	fmt.Fprintf(w, "%d spans, %d blocks of %d, %d trace ids\n", maxID.Int64, blocks, 1<<schema.SpanBlockShift, len(ids))
	for round := range rounds {
		var byKey, byBlock []time.Duration
		for _, id := range ids {
			var lo1, hi1, lo2, hi2 sql.NullInt64
			t0 := time.Now()
			if err := byKeyStmt.QueryRow(id).Scan(&lo1, &hi1); err != nil {
				return res, fmt.Errorf("by trace_chunks: %w", err)
			}
			t1 := time.Now()
			if err := byBlockStmt.QueryRow(id, blocks-1).Scan(&lo2, &hi2); err != nil {
				return res, fmt.Errorf("block by block: %w", err)
			}
			byKey, byBlock = append(byKey, t1.Sub(t0)), append(byBlock, time.Since(t1))
			res.lookups++
			if lo1.Valid {
				res.found++
			}
			if lo1 != lo2 || hi1 != hi2 {
				res.differ++
				fmt.Fprintf(w, "trace %s: span ids %v..%v by trace_chunks, %v..%v block by block\n", id, lo1, hi1, lo2, hi2)
			}
		}
		fmt.Fprintf(w, "round %d: by trace_chunks' key p50 %.3f ms p90 %.3f; one seek a block p50 %.2f ms p90 %.2f\n",
			round+1, ms(byKey, 50), ms(byKey, 90), ms(byBlock, 50), ms(byBlock, 90))
	}
	return res, nil
}

// sampleTraces returns up to n distinct trace ids of spans spread over the ids 1..maxID.
func sampleTraces(db *sql.DB, maxID int64, n int) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	for try := 0; len(ids) < n && try < 4*n; try++ {
		var id string
		err := db.QueryRow(`SELECT trace_id FROM spans WHERE id >= ? ORDER BY id LIMIT 1`, rand.Int64N(maxID)+1).Scan(&id)
		if err != nil {
			return nil, fmt.Errorf("sample trace ids: %w", err)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// ms returns the p-th percentile of ds in milliseconds.
func ms(ds []time.Duration, p int) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)-1)*p/100]) / 1e6
}
