package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/stage"
)

// textMatches counts the logs whose log_text group matches the MATCH query match and whose
// body is LIKE like.
func textMatches(t *testing.T, s *Store, match, like string) int {
	t.Helper()
	var n int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM log_text f CROSS JOIN logs l
		ON l.id BETWEEN f.rowid << 4 AND (f.rowid << 4) + 15
		WHERE log_text MATCH ? AND l.body LIKE ?`, match, like).Scan(&n); err != nil {
		t.Fatalf("match %s: %v", match, err)
	}
	return n
}

// tracesPathIn returns the database in dir that holds the trace tables (shard.go).
func tracesPathIn(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, TracesFileName)); err == nil {
		return filepath.Join(dir, TracesFileName)
	}
	return filepath.Join(dir, FileName)
}

// failSpanLinks makes every insert into span_links in dir's trace tables fail, from another
// connection (closed with the test), until the caller drops the trigger fail_links on it.
func failSpanLinks(t *testing.T, dir string) *sql.DB {
	t.Helper()
	// The projector retries the failing slice meanwhile, holding the write lock while it runs:
	// the test's own writes wait for it rather than fail with SQLITE_BUSY.
	other, err := sql.Open("sqlite", "file:"+tracesPathIn(dir)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if _, err := other.Exec(`CREATE TRIGGER fail_links BEFORE INSERT ON span_links BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	return other
}

// TestProjectionRetriesWithoutDuplicates makes a projection transaction fail part-way (a trigger
// aborts inserts into span_links, after the spans and, in one file, logs rows of the same slice
// were written), then lets it succeed: the retry must leave exactly one copy of every row.
func TestProjectionRetriesWithoutDuplicates(t *testing.T) {
	for _, oneFile := range []bool{false, true} {
		t.Run(layoutName(oneFile), func(t *testing.T) { testProjectionRetriesWithoutDuplicates(t, oneFile) })
	}
}

// layoutName names a test of the one-file or the two-file layout (shard.go).
func layoutName(oneFile bool) string {
	if oneFile {
		return "one-file"
	}
	return "two-files"
}

func testProjectionRetriesWithoutDuplicates(t *testing.T, oneFile bool) {
	// Store the requests with projection off, so the first projection slice holds all three.
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, TracesFile: !oneFile})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "retry me", 4))
	appendTraces(t, s, makeTraces())
	appendMetrics(t, s, makeMetrics())
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := failSpanLinks(t, dir)
	s = openTest(t, Config{Dir: dir, Logger: quietLogger})
	polltest.Until(t, "a failed projection", func() bool { return s.Stats().ProjectionErrors > 0 })
	rolledBack := []string{"spans", "trace_chunks"}
	if oneFile {
		rolledBack = append(rolledBack, "logs")
	}
	for _, table := range rolledBack {
		if n := countRows(t, s, table); n != 0 {
			t.Fatalf("%s after failed slice: got %d, want 0 (rolled back)", table, n)
		}
	}
	if _, err := other.Exec(`DROP TRIGGER fail_links`); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	// Each projected database keeps the resources of its rows: in two files traces.db has
	// the spans' one.
	resources := map[bool]int{true: 3, false: 2}[oneFile]
	if !oneFile {
		if n := queryRows(t, s.ReadDB(), `SELECT count(*) FROM traces.resources`)[0][0]; n != "1" {
			t.Errorf("traces.resources rows: got %s, want 1", n)
		}
	}
	for table, want := range map[string]int{"logs": 4, "spans": 2, "span_links": 1, "span_events": 1, "number_points": 3,
		"metrics": 5, "resources": resources, "summary_points": 1} {
		if got := countRows(t, s, table); got != want {
			t.Errorf("%s rows: got %d, want %d", table, got, want)
		}
	}
	if got := textMatches(t, s, stage.TextQuery("retry"), "%retry%"); got != 4 {
		t.Errorf("FTS rows: got %d, want 4", got)
	}
	checkIntegrity(t, s)
}

// TestProjectionPrefetchRetries: with a backlog the projector stages the next slice while the
// current one commits. A commit that fails then drops the staged slice (its log and span ids
// were counted from the failed one), and the retry projects every row once, with log and span
// ids that have no gaps.
func TestProjectionPrefetchRetries(t *testing.T) {
	for _, oneFile := range []bool{false, true} {
		t.Run(layoutName(oneFile), func(t *testing.T) { testProjectionPrefetchRetries(t, oneFile) })
	}
}

func testProjectionPrefetchRetries(t *testing.T, oneFile bool) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, TracesFile: !oneFile})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // a traces row, then two logs rows, ...
		if i%2 == 0 {
			appendTraces(t, s, makeTraces())
		}
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("prefetched%d", i), 3))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := failSpanLinks(t, dir)
	// One raw row of a projector's signals per slice: in one file the first traces row fails
	// while the logs row after it is being staged.
	s = openTest(t, Config{Dir: dir, ProjectSlice: 1, Logger: quietLogger})
	polltest.Until(t, "two failed projections", func() bool { return s.Stats().ProjectionErrors >= 2 })
	if n := countRows(t, s, "spans"); n != 0 {
		t.Fatalf("spans after failed slices: got %d, want 0", n)
	}
	if n := countRows(t, s, "logs"); oneFile && n != 0 {
		t.Fatalf("logs after failed slices: got %d, want 0", n)
	}
	// Only the one-file layout prefetches (project/prefetch.go).
	if n := s.stats.prefetches.Load(); oneFile && n == 0 {
		t.Fatal("no slice was prefetched while one committed")
	}
	if _, err := other.Exec(`DROP TRIGGER fail_links`); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	for table, want := range map[string]int{"logs": 60, "spans": 20, "span_links": 10} {
		if got := countRows(t, s, table); got != want {
			t.Errorf("%s rows: got %d, want %d", table, got, want)
		}
	}
	var lo, hi, n, dups int
	if err := s.ReadDB().QueryRow(`SELECT min(id), max(id), count(*), count(*) - count(DISTINCT body) FROM logs`).Scan(&lo, &hi, &n, &dups); err != nil {
		t.Fatal(err)
	}
	if lo != 1 || hi != n || dups != 0 {
		t.Errorf("log ids %d..%d for %d rows, %d duplicated bodies; want 1..%d, none", lo, hi, n, dups, n)
	}
	if err := s.ReadDB().QueryRow(`SELECT min(id), max(id), count(*) FROM spans`).Scan(&lo, &hi, &n); err != nil {
		t.Fatal(err)
	}
	if lo != 1 || hi != n {
		t.Errorf("span ids %d..%d for %d rows; want 1..%d", lo, hi, n, n)
	}
	if st := s.Stats(); st.Logs.RecordsProjected != 60 || st.Traces.RecordsProjected != 20 || st.LagRecords != 0 {
		t.Errorf("Stats: %d logs and %d spans projected, lag %d; want 60, 20, 0", st.Logs.RecordsProjected, st.Traces.RecordsProjected, st.LagRecords)
	}
	if got := textMatches(t, s, stage.TextQuery("refet"), "%prefetched%"); got != 60 {
		t.Errorf("indexed bodies: got %d, want 60", got)
	}
	checkIntegrity(t, s)
}

// TestProjectionResumes stores raw rows with projection off, then reopens with projection on:
// the backlog shows as lag, is projected, and a further reopen projects nothing twice.
func TestProjectionResumes(t *testing.T) {
	dir := t.TempDir()
	writeBacklog(t, dir, func(s *Store) {
		for i := range 30 {
			appendLogs(t, s, makeLogs("svc", fmt.Sprintf("batch%d", i), 3))
		}
	})
	s, err := Open(context.Background(), Config{Dir: dir, ProjectSlice: 7})
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 90 || st.ProjectionSlices < 5 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 90 in >= 5, lag 0", st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	appendLogs(t, s, makeLogs("svc", "after", 1))
	waitProjected(t, s)
	if n := countRows(t, s, "logs"); n != 91 {
		t.Errorf("logs rows: got %d, want 91", n)
	}
	var dups int
	if err := s.ReadDB().QueryRow(`SELECT count(*) FROM (SELECT body FROM logs GROUP BY body HAVING count(*) > 1)`).Scan(&dups); err != nil || dups != 0 {
		t.Errorf("duplicated bodies: got %d (%v), want 0", dups, err)
	}
}

func TestProjectedNotify(t *testing.T) {
	s := openTest(t, Config{})
	ch, unsubscribe := s.ProjectedNotify()
	defer unsubscribe()
	appendLogs(t, s, makeLogs("svc", "notify", 1))
	<-ch
	// By either projector: traces.db's passes the logs row by in a slice of its own.
	passed := false
	for i := range s.shards {
		passed = passed || s.stats.projectedRawID[i].Load() == 1
	}
	if !passed {
		t.Errorf("notified before any slice committed")
	}
	unsubscribe()
	if _, ok := <-ch; ok {
		t.Errorf("channel still open after unsubscribe")
	}
}

// TestProjectionSkipsUndecodable stores a payload that is not OTLP protobuf between two good
// ones: projection must pass it by (kept and counted: project/unprojectable.go) and go on, never stall
// behind it.
func TestProjectionSkipsUndecodable(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	appendLogs(t, s, makeLogs("svc", "before", 1))
	if err := s.Append(context.Background(), signal.Logs, []byte{0xff, 0xff, 0xff}, 1); err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "after", 1))
	waitProjected(t, s)
	got := queryRows(t, s.ReadDB(), `SELECT body FROM logs ORDER BY id`)
	if diff := cmp.Diff([][]string{{"before 0"}, {"after 0"}}, got); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	if st := s.Stats(); st.Logs.RecordsProjected != 2 || st.UnprojectableRecords != 1 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected, %d unprojectable, lag %d; want 2, 1 (the skipped row is no lag, and no projected record), 0",
			st.Logs.RecordsProjected, st.UnprojectableRecords, st.LagRecords)
	}
}
