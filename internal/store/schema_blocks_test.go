package store

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/otelbench/otelbench/internal/schema"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// slowSummaries computes, from the tables themselves, what log_blocks and service_counts must
// hold (the aggregates /services used to run).
const (
	slowServiceCounts = `
		SELECT coalesce(service, ''), 'logs', count(*), max(time_unix_nano) FROM logs GROUP BY 1
		UNION ALL SELECT coalesce(service, ''), 'spans', count(*), max(start_time_unix_nano) FROM spans GROUP BY 1
		UNION ALL SELECT coalesce(service, ''), 'metrics', count(*), 0 FROM metrics GROUP BY 1
		ORDER BY 1, 2`
	slowLogBlocks  = `SELECT id >> 12, min(time_unix_nano), max(time_unix_nano), count(*) FROM logs GROUP BY 1 ORDER BY 1`
	gotLogBlocks   = `SELECT block, min_time_unix_nano, max_time_unix_nano, logs FROM log_blocks ORDER BY 1`
	gotPointBlocks = `SELECT point_table, block, min_time_unix_nano, max_time_unix_nano, points FROM point_blocks ORDER BY 1, 2`
)

// slowPointBlocks aggregates what point_blocks must hold over the points tables' rows with a
// block (the rows of a database upgraded from version 8 have none).
func slowPointBlocks() string {
	var parts []string
	for _, t := range schema.PointTables {
		parts = append(parts, `SELECT '`+t+`', block, min(time_unix_nano), max(time_unix_nano), count(*) FROM `+t+`
			WHERE block IS NOT NULL GROUP BY block`)
	}
	return strings.Join(parts, " UNION ALL ") + " ORDER BY 1, 2"
}

// misplacedPoints lists the points rows with a block that is not their rowid's.
func misplacedPoints() string {
	var parts []string
	for _, t := range schema.PointTables {
		parts = append(parts, `SELECT '`+t+`', rowid, block FROM `+t+` WHERE block != rowid >> `+fmt.Sprint(schema.PointBlockShift))
	}
	return strings.Join(parts, " UNION ALL ")
}

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
	if diff := cmp.Diff(queryRows(t, db, slowPointBlocks()), queryRows(t, db, gotPointBlocks)); diff != "" {
		t.Errorf("point_blocks (-aggregate +summary):\n%s", diff)
	}
	for i, sh := range s.shards {
		got := queryRows(t, db, `SELECT log_id, span_id, metric_id FROM `+schemas[i]+`.summary_state`)
		max := func(table string, part schema.Parts) string {
			if sh.parts&part == 0 {
				return "0"
			}
			return "coalesce((SELECT max(id) FROM " + table + "), 0)"
		}
		want := queryRows(t, db, `SELECT `+max("logs", schema.LogsMetrics)+", "+max("spans", schema.Traces)+", "+max("metrics", schema.LogsMetrics))
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
	appendMetrics(t, s, manyPoints(round, 1500+round*700))
	waitProjected(t, s)
}

// manyPoints returns n points of each metric type, across 7 series each, whose times go back
// and forth: with appendSummaryData's later rounds they fill more than one block of each table.
func manyPoints(round, n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "cart")
	sm := rm.ScopeMetrics().AppendEmpty()
	at := func(i int) pcommon.Timestamp {
		return pcommon.Timestamp(1_700_000_000_000_000_000 + int64((i*7919)%5000)*1e6 + int64(round)*1e9)
	}
	for series := range 7 {
		g := sm.Metrics().AppendEmpty()
		g.SetName(fmt.Sprintf("gauge%d", series))
		h := sm.Metrics().AppendEmpty()
		h.SetName(fmt.Sprintf("hist%d", series))
		hh := h.SetEmptyHistogram()
		e := sm.Metrics().AppendEmpty()
		e.SetName(fmt.Sprintf("exp%d", series))
		eh := e.SetEmptyExponentialHistogram()
		q := sm.Metrics().AppendEmpty()
		q.SetName(fmt.Sprintf("summary%d", series))
		qs := q.SetEmptySummary()
		gs := g.SetEmptyGauge()
		for i := series; i < n; i += 7 {
			dp := gs.DataPoints().AppendEmpty()
			dp.SetTimestamp(at(i))
			dp.SetIntValue(int64(i))
			hdp := hh.DataPoints().AppendEmpty()
			hdp.SetTimestamp(at(i))
			hdp.SetCount(uint64(i))
			edp := eh.DataPoints().AppendEmpty()
			edp.SetTimestamp(at(i))
			edp.SetCount(uint64(i))
			qdp := qs.DataPoints().AppendEmpty()
			qdp.SetTimestamp(at(i))
			qdp.SetCount(uint64(i))
		}
	}
	return md
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
			if got := queryRows(t, s.ReadDB(), `SELECT count(*) FROM point_blocks GROUP BY point_table`); len(got) != len(schema.PointTables) || got[0][0] == "1" {
				t.Errorf("point blocks per table %v: each table's points should span several", got)
			}
			if got := queryRows(t, s.ReadDB(), misplacedPoints()); len(got) > 0 {
				t.Errorf("points whose block is not rowid >> %d: %v", schema.PointBlockShift, got)
			}
		})
	}
}

// TestPointRowidsChecked inserts a number point behind the projector's back: the next slice's
// points would take rowids the projector did not count on, so that slice fails, and its retry
// counts afresh: every point's block is its rowid's.
func TestPointRowidsChecked(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	appendMetrics(t, s, makeMetrics())
	waitProjected(t, s)
	db, err := sql.Open("sqlite", "file:"+s.TelemetryPath()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO number_points(rowid, metric_id, raw_id, time_unix_nano, start_time_unix_nano, block)
		VALUES (8191, 1, 0, 0, 0, 1)`); err != nil {
		t.Fatal(err)
	}
	appendMetrics(t, s, manyPoints(0, 700))
	waitProjected(t, s)
	if st := s.Stats(); st.ProjectionErrors == 0 {
		t.Error("no projection error: the slice wrote points under blocks of rowids it did not assign")
	}
	if got := queryRows(t, s.ReadDB(), misplacedPoints()); len(got) > 0 {
		t.Errorf("points whose block is not rowid >> %d: %v", schema.PointBlockShift, got)
	}
	if got := queryRows(t, s.ReadDB(), `SELECT min(rowid), count(*) FROM number_points WHERE rowid > 8191`); got[0][0] != "8192" || got[0][1] != "700" {
		t.Errorf("later number points (first rowid, count): %v, want 8192 700", got[0])
	}
}
