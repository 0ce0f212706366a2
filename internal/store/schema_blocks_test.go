package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// slowSummaries computes, from the tables themselves, what log_blocks and service_counts must
// hold (the aggregates /services used to run).
const (
	slowServiceCounts = `
		SELECT coalesce(service, ''), 'logs', count(*), max(time_unix_nano) FROM logs GROUP BY 1
		UNION ALL SELECT coalesce(service, ''), 'spans', count(*), max(start_time_unix_nano) FROM spans GROUP BY 1
		UNION ALL SELECT coalesce(service, ''), 'metrics', count(*), 0 FROM metrics GROUP BY 1
		ORDER BY 1, 2`
	slowLogBlocks = `SELECT id >> 12, min(time_unix_nano), max(time_unix_nano), count(*) FROM logs GROUP BY 1 ORDER BY 1`
	gotLogBlocks  = `SELECT block, min_time_unix_nano, max_time_unix_nano, logs FROM log_blocks ORDER BY 1`
)

// checkSummaries compares the summaries with the aggregates over the tables. Each projected
// database counts its own tables; ReadDB attaches traces.db as "traces".
func checkSummaries(t *testing.T, s *Store) {
	t.Helper()
	db := s.ReadDB()
	schemas := []string{"main", "traces"}[:len(s.shards)]
	var counts []string
	for _, sc := range schemas {
		counts = append(counts, `SELECT service, signal, records, last_seen_unix_nano FROM `+sc+`.service_counts`)
	}
	gotServiceCounts := strings.Join(counts, " UNION ALL ") + " ORDER BY 1, 2"
	if diff := cmp.Diff(queryRows(t, db, slowServiceCounts), queryRows(t, db, gotServiceCounts)); diff != "" {
		t.Errorf("service_counts (-aggregate +summary):\n%s", diff)
	}
	if diff := cmp.Diff(queryRows(t, db, slowLogBlocks), queryRows(t, db, gotLogBlocks)); diff != "" {
		t.Errorf("log_blocks (-aggregate +summary):\n%s", diff)
	}
	for i, sh := range s.shards {
		got := queryRows(t, db, `SELECT log_id, span_id, metric_id FROM `+schemas[i]+`.summary_state`)
		max := func(table string, part parts) string {
			if sh.parts&part == 0 {
				return "0"
			}
			return "coalesce((SELECT max(id) FROM " + table + "), 0)"
		}
		want := queryRows(t, db, `SELECT `+max("logs", partLogsMetrics)+", "+max("spans", partTraces)+", "+max("metrics", partLogsMetrics))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s summary_state (-max ids +state):\n%s", sh.name, diff)
		}
	}
}

// appendSummaryData appends logs of three services (one without service.name) whose times go
// back and forth across several 4,096-id blocks, traces and metrics.
func appendSummaryData(t *testing.T, s *Store, round int) {
	t.Helper()
	for i, svc := range []string{"checkout", "", "cart", "checkout"} {
		ld := makeLogs(svc, fmt.Sprintf("r%d", round), 1500+round*700+i*300)
		if svc == "" {
			ld.ResourceLogs().At(0).Resource().Attributes().Remove("service.name")
		}
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for j := range lrs.Len() { // late and early records
			lrs.At(j).SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64((j*7919)%5000)*1e6 - int64(round*i)*1e9))
		}
		appendLogs(t, s, ld)
	}
	appendTraces(t, s, makeTraces())
	appendTraces(t, s, interleavedTraces(3+round))
	appendMetrics(t, s, makeMetrics())
	waitProjected(t, s)
}

// TestSummariesMatchAggregates checks the trigger-maintained summaries against the aggregates
// over the tables after every projected batch, in both layouts (shard.go).
func TestSummariesMatchAggregates(t *testing.T) {
	for _, oneFile := range []bool{false, true} {
		t.Run(layoutName(oneFile), func(t *testing.T) {
			s := openTest(t, Config{ProjectSlice: 2, Sync: SyncOff, TracesFile: !oneFile})
			for round := range 3 {
				appendSummaryData(t, s, round)
				checkSummaries(t, s)
			}
			if n := countRows(t, s, "log_blocks"); n < 3 {
				t.Errorf("only %d log blocks: the data should span several", n)
			}
		})
	}
}

// TestSummariesUpgrade opens a version 2 database (no summaries): Open summarizes its rows in
// bounded steps before projecting, and the trigger continues from there. A catch-up cut short
// (summary_state part-way) resumes at the next Open.
func TestSummariesUpgrade(t *testing.T) {
	defer func(step int64) { summaryStep = step }(summaryStep)
	summaryStep = 1000 // several steps per table
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, Sync: SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	appendSummaryData(t, s, 0)
	appendSummaryData(t, s, 1)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TRIGGER IF EXISTS summarize_logs_metrics; DROP TRIGGER IF EXISTS summarize_spans; DROP TABLE log_blocks; DROP TABLE service_counts;
		DROP TABLE summary_state; UPDATE schema_version SET version = 2`); err != nil {
		t.Fatal(err)
	}
	// Interrupted upgrade: the tables exist and the first 2,000 logs are summarized.
	if _, err := db.Exec((partLogsMetrics | partTraces).sql()); err != nil {
		t.Fatal(err)
	}
	if err := summarizeRange(context.Background(), db, summaryTables[0], 0, 2000); err != nil {
		t.Fatal(err)
	}
	if got := queryRows(t, db, `SELECT version FROM schema_version`); got[0][0] != "2" {
		t.Fatalf("version %s before the upgrade", got[0][0])
	}
	s = openTest(t, Config{Dir: dir, Sync: SyncOff})
	checkSummaries(t, s)
	if got := queryRows(t, s.ReadDB(), `SELECT version FROM schema_version`); got[0][0] != fmt.Sprint(SchemaVersion) {
		t.Errorf("version %s after the upgrade, want %d", got[0][0], SchemaVersion)
	}
	appendSummaryData(t, s, 2)
	checkSummaries(t, s)
}
