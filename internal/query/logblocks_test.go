package query

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/sqlglob"
	"github.com/otelbench/otelbench/internal/store"
	"go.opentelemetry.io/collector/pdata/plog"
)

// openStoreDir opens a store in dir; the caller closes it.
func openStoreDir(t testing.TB, dir string) *store.Store {
	t.Helper()
	return openStoreConfig(t, store.Config{Dir: dir})
}

func openStoreConfig(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	cfg.Sync, cfg.Logger = store.SyncOff, slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	return st
}

func closeStore(t testing.TB, st *store.Store) {
	t.Helper()
	if err := st.Close(context.Background()); err != nil {
		t.Fatalf("store.Close: %v", err)
	}
}

var blockTraces = []string{"0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"}

// appendDisordered appends n logs in requests of up to 700 whose times mostly grow with the
// request but not always: about 1 in 50 requests carries old timestamps (arriving late), 1 in
// 3,000 records a timestamp up to 30 s in the future (a skewed clock), and times are
// truncated to 10 ms so many records share one. Bodies hold the common term "timeout" (1 in
// 7), the rare "quokka" (1 in 500), and non-ASCII text.
func appendDisordered(t testing.TB, st *store.Store, rng *rand.Rand, base time.Time, first, n int) {
	t.Helper()
	for done := 0; done < n; {
		size := min(1+rng.IntN(700), n-done)
		at := base.Add(time.Duration(first+done) * 10 * time.Millisecond)
		if rng.IntN(50) == 0 {
			at = base.Add(-time.Duration(rng.IntN(3600)) * time.Second) // late: old timestamps
		}
		logs := make([]querytest.LogSpec, size)
		for i := range logs {
			ts := at.Add(time.Duration(rng.IntN(2000)-1000) * time.Millisecond)
			if rng.IntN(3000) == 0 {
				ts = ts.Add(time.Duration(rng.IntN(30)) * time.Second)
			}
			words := []string{"req", "GET", "cart", "Ünïcode", "status=200", "dur=12ms"}
			var b strings.Builder
			for range 4 {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			}
			if rng.IntN(7) == 0 {
				b.WriteString([]string{"upstream timeout", "TimeOut!", "time-out"}[rng.IntN(3)])
			}
			if rng.IntN(500) == 0 {
				b.WriteString(" quokka")
			}
			l := querytest.LogSpec{
				Service: []string{"alpha", "beta", "gamma"}[rng.IntN(3)],
				Sev:     []plog.SeverityNumber{plog.SeverityNumberInfo, plog.SeverityNumberWarn, plog.SeverityNumberError}[rng.IntN(3)],
				Body:    b.String(),
				At:      ts.Truncate(10 * time.Millisecond),
			}
			if rng.IntN(10) == 0 {
				l.TraceID = blockTraces[rng.IntN(2)]
			}
			logs[i] = l
		}
		querytest.AppendLogs(t, st, logs...)
		done += size
	}
	querytest.WaitProjected(t, st)
}

// allLogs reads every log row (the reference's input).
func allLogs(t testing.TB, r *Reader) []Log {
	t.Helper()
	rows, err := r.queryLogs(context.Background(), nil, 1<<30, `SELECT `+logCols+` FROM logs l`)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// referenceLogs answers q (without its cursor) by brute force: every row filtered in Go,
// sorted newest first.
func referenceLogs(all []Log, q LogQuery) []Log {
	var glob *sqlglob.Pattern
	if q.Glob != "" {
		g := sqlglob.Compile(q.Glob)
		glob = &g
	}
	var out []Log
	for _, l := range all {
		switch {
		case q.Service != "" && l.Service != q.Service,
			q.SeverityMin > 0 && l.SeverityNumber < q.SeverityMin,
			q.TraceID != nil && l.TraceID != hex.EncodeToString(q.TraceID),
			q.Since != 0 && l.TimeUnixNano < q.Since,
			q.Until != 0 && l.TimeUnixNano >= q.Until,
			q.Q != "" && !strings.Contains(strings.ToLower(l.Body), strings.ToLower(q.Q)),
			glob != nil && !glob.Match(l.Body):
			continue
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Log) int {
		if c := cmp.Compare(b.TimeUnixNano, a.TimeUnixNano); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out
}

// referencePage is the page of sorted (referenceLogs) that starts after cursor c.
func referencePage(sorted []Log, c *Cursor, limit int) LogPage {
	i := 0
	if c != nil {
		i, _ = slices.BinarySearchFunc(sorted, *c, func(l Log, c Cursor) int {
			if l.TimeUnixNano != c.TimeUnixNano {
				return cmp.Compare(c.TimeUnixNano, l.TimeUnixNano)
			}
			return cmp.Compare(c.ID, l.ID)
		})
		if i < len(sorted) && sorted[i].ID == c.ID {
			i++
		}
	}
	rest := sorted[i:]
	return page(rest[:min(len(rest), limit+1)], limit)
}

func pageIDs(p LogPage) []int64 {
	ids := make([]int64, len(p.Logs))
	for i, l := range p.Logs {
		ids[i] = l.ID
	}
	return ids
}

// checkAgainstReference pages through every query in queries (up to 8 pages) with the blocks
// plan and with the selectivity plan, and compares each page (ids, cursor) with the reference.
func checkAgainstReference(t *testing.T, st *store.Store, queries map[string]LogQuery) {
	t.Helper()
	checkPlanAgainstReference(t, st, PlanBlocks, queries)
}

// checkPlanAgainstReference is checkAgainstReference for queries the blocks reader answers
// with plan.
func checkPlanAgainstReference(t *testing.T, st *store.Store, plan LogPlan, queries map[string]LogQuery) {
	t.Helper()
	blocks := NewReader(st.ReadDB())
	peer := NewReader(st.ReadDB())
	peer.noBlocks = true
	all := allLogs(t, blocks)
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			for _, r := range []*Reader{blocks, peer} {
				q := q
				sorted := referenceLogs(all, q)
				for pageNo := 0; ; pageNo++ {
					if pageNo == 8 || r == peer && pageNo == 2 {
						break // deep enough (and -race makes SQLite slow): later pages walk the same way
					}
					want := referencePage(sorted, q.Cursor, q.Limit)
					got, gotPlan, err := r.Logs(context.Background(), q)
					if err != nil {
						t.Fatal(err)
					}
					if r == blocks && gotPlan != plan {
						t.Errorf("plan %s, want %s", gotPlan, plan)
					}
					if !slices.Equal(pageIDs(got), pageIDs(want)) || got.NextCursor != want.NextCursor {
						t.Fatalf("plan %s, page %d: got ids %v cursor %q, want %v cursor %q", gotPlan, pageNo,
							pageIDs(got), got.NextCursor, pageIDs(want), want.NextCursor)
					}
					if got.NextCursor == "" {
						break
					}
					c, err := parseCursor(got.NextCursor)
					if err != nil {
						t.Fatal(err)
					}
					q.Cursor = &c
				}
			}
		})
	}
}

func searchQueries(base time.Time) map[string]LogQuery {
	tid, _ := hex.DecodeString(blockTraces[0])
	qs := map[string]LogQuery{
		"common":            {LogFilter: LogFilter{Q: "timeout"}, Limit: 100},
		"common limit 1":    {LogFilter: LogFilter{Q: "TIMEOUT"}, Limit: 1},
		"common service":    {LogFilter: LogFilter{Q: "timeout", Service: "beta"}, Limit: 37},
		"common severity":   {LogFilter: LogFilter{Q: "out", SeverityMin: 17}, Limit: 250},
		"common trace":      {LogFilter: LogFilter{Q: "time", TraceID: tid}, Limit: 50},
		"rare":              {LogFilter: LogFilter{Q: "quokka"}, Limit: 7},
		"none":              {LogFilter: LogFilter{Q: "zebra"}, Limit: 10},
		"non-ASCII":         {LogFilter: LogFilter{Q: "ÜNÏ"}, Limit: 20},
		"glob":              {LogFilter: LogFilter{Glob: "*[Tt]ime*ut*"}, Limit: 60},
		"glob literal runs": {LogFilter: LogFilter{Glob: "*upstream time?ut*"}, Limit: 45},
		"glob case":         {LogFilter: LogFilter{Glob: "*Timeout*"}, Limit: 10},
		"glob unterminated": {LogFilter: LogFilter{Glob: "*timeout[a-"}, Limit: 10},
		"since until":       {LogFilter: LogFilter{Q: "timeout", Since: base.Add(time.Minute).UnixNano(), Until: base.Add(2 * time.Minute).UnixNano()}, Limit: 40},
		"since only (past)": {LogFilter: LogFilter{Q: "req", Since: base.Add(-10 * time.Minute).UnixNano()}, Limit: 30},
	}
	return qs
}

// TestLogsByBlocksExact checks the blocks plan (and the selectivity plan) page by page against
// a brute-force reference, on data whose times disagree with id order: late old timestamps,
// future outliers, many equal timestamps, across many 4,096-id blocks.
func TestLogsByBlocksExact(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	rng := rand.New(rand.NewPCG(7, 11))
	appendDisordered(t, st, rng, base, 0, 10_000)
	checkAgainstReference(t, st, searchQueries(base))
}

func telemetryPath(dir string) string { return filepath.Join(dir, store.FileName) }

// TestLogBlocksBound checks the cache against the prefix maxima computed from the logs rows,
// for ids in complete blocks, in the partial last block, and beyond what is summarized.
func TestLogBlocksBound(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	rng := rand.New(rand.NewPCG(1, 2))
	r := NewReader(st.ReadDB())
	for round, n := range []int{3000, 100, 2500} {
		appendDisordered(t, st, rng, base, round*10_000, n)
		snap, err := r.blocks.refresh(context.Background(), r.db)
		if err != nil {
			t.Fatal(err)
		}
		all := allLogs(t, r)
		slices.SortFunc(all, func(a, b Log) int { return cmp.Compare(a.ID, b.ID) })
		blockMax := map[int64]int64{}
		for _, l := range all {
			b := l.ID >> schema.LogBlockShift
			if m, ok := blockMax[b]; !ok || l.TimeUnixNano > m {
				blockMax[b] = l.TimeUnixNano
			}
		}
		run, upTo := int64(-1<<63), int64(-1<<63) // prefix maxima to this id and to its block's end
		for _, l := range all {
			run = max(run, l.TimeUnixNano)
			upTo = max(upTo, blockMax[l.ID>>schema.LogBlockShift])
			b, ok := snap.bound(l.ID)
			if !ok {
				t.Fatalf("round %d: id %d of %d not covered", round, l.ID, len(all))
			}
			// The bound may exceed the exact prefix maximum only by logs of the same block.
			if b < run || b > upTo {
				t.Fatalf("round %d: bound(%d) = %d, want between %d and %d", round, l.ID, b, run, upTo)
			}
		}
		if _, ok := snap.bound(all[len(all)-1].ID + 1); ok {
			t.Errorf("round %d: id past the summary reported as covered", round)
		}
	}
}

func TestTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, k := range []int{1, 2, 5, 101} {
		h := topK{k: k}
		var all []logKey
		for i := range 1000 {
			x := logKey{t: int64(rng.IntN(50)), id: int64(i)}
			all = append(all, x)
			h.offer(x)
		}
		slices.SortFunc(all, func(a, b logKey) int {
			if a.less(b) {
				return 1
			}
			return -1
		})
		got := slices.Clone(h.items)
		slices.SortFunc(got, func(a, b logKey) int {
			if a.less(b) {
				return 1
			}
			return -1
		})
		if !slices.Equal(got, all[:k]) {
			t.Errorf("k=%d: got %v, want %v", k, got, all[:k])
		}
	}
}

// TestLogsByBlocksStopsEarly checks that the blocks plan reads few candidates when the newest
// matches lie under many newer logs without the term (what ingest does to a common term),
// and that it still reads them all when nothing bounds the walk.
func TestLogsByBlocksStopsEarly(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var logs []querytest.LogSpec
	for i := range 9_000 {
		body := fmt.Sprintf("line %d", i)
		if i%10 == 3 {
			body += " upstream timeout"
		}
		logs = append(logs, querytest.LogSpec{Service: "a", Body: body, At: base.Add(time.Duration(i) * time.Millisecond)})
		if len(logs) == 1000 {
			querytest.AppendLogs(t, st, logs...)
			logs = logs[:0]
		}
	}
	for i := range 20 { // newer logs without the term, on top
		querytest.AppendLogs(t, st, querytest.LogSpec{Service: "a", Body: fmt.Sprintf("ingest %d", i), At: base.Add(time.Hour)})
	}
	querytest.WaitProjected(t, st)
	r := NewReader(st.ReadDB())
	walk := func(q LogQuery) (int, []Log) {
		t.Helper()
		snap, err := r.blocks.refresh(context.Background(), r.db)
		if err != nil {
			t.Fatal(err)
		}
		fts := textMatch(trigramQuery(q.Q))
		rows, walked, err := r.logsByBlocks(context.Background(), &q, snap, fts, q.baseWhere(nil), `l.body LIKE ? ESCAPE '\'`,
			[]any{likeContains(q.Q)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return walked, rows
	}
	// 900 matches, ~81 in the last block (ids 8192-9020, with the newer logs), the 101 newest
	// reach into block 1 (4096-8191), whose 410 are read before block 0's bound stops the walk.
	if walked, rows := walk(LogQuery{LogFilter: LogFilter{Q: "timeout"}, Limit: 100}); walked > 600 || len(rows) != 101 {
		t.Errorf("common term: walked %d candidates for %d rows, want at most 600 for 101", walked, len(rows))
	}
	// since after every match: the walk ends on leaving the last block, after its ~81 matches.
	if walked, rows := walk(LogQuery{LogFilter: LogFilter{Q: "timeout", Since: base.Add(30 * time.Minute).UnixNano()}, Limit: 100}); walked > 100 || len(rows) != 0 {
		t.Errorf("since after all matches: walked %d, got %d rows", walked, len(rows))
	}
	// A service no row has: nothing fills the page, every candidate group is read (one row
	// each, as none has a passing log).
	groups := map[int64]bool{}
	ids, err := st.ReadDB().Query(`SELECT id FROM logs WHERE body LIKE '%timeout%'`)
	if err != nil {
		t.Fatal(err)
	}
	for ids.Next() {
		var id int64
		if err := ids.Scan(&id); err != nil {
			t.Fatal(err)
		}
		groups[id>>schema.LogTextShift] = true
	}
	if err := errors.Join(ids.Err(), ids.Close()); err != nil {
		t.Fatal(err)
	}
	if walked, _ := walk(LogQuery{LogFilter: LogFilter{Q: "timeout", Service: "b"}, Limit: 100}); walked != len(groups) {
		t.Errorf("no row passes: walked %d candidates, want all %d groups", walked, len(groups))
	}
}
