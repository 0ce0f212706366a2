package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// fileTables returns the tables of the database file at path.
func fileTables(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	for _, r := range queryRows(t, db, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`) {
		out = append(out, r[0])
	}
	return out
}

// TestLayouts: a new data directory keeps every table in telemetry.db, or with TracesFile puts
// its trace tables in traces.db and nowhere else; each keeps its layout whatever a later Open
// asks for; and the read pool answers the same queries over both.
func TestLayouts(t *testing.T) {
	traceTables := []string{"span_events", "span_links", "spans", "trace_chunks"}
	for _, tc := range []struct {
		first, reopen bool // one file asked for at the first and at the second Open
		want          bool // the directory has one file
	}{
		{true, true, true},
		{true, false, true}, // spans in telemetry.db: one file it stays
		{false, false, false},
		{false, true, false}, // traces.db exists: it stays in use
	} {
		t.Run(fmt.Sprintf("%s then %s", layoutName(tc.first), layoutName(tc.reopen)), func(t *testing.T) {
			dir := t.TempDir()
			for i, oneFile := range []bool{tc.first, tc.reopen} {
				s := openTest(t, Config{Dir: dir, TracesFile: !oneFile, Sync: SyncOff})
				appendLogs(t, s, makeLogs("svc", fmt.Sprint("open", i), 3))
				appendTraces(t, s, makeTraces())
				appendMetrics(t, s, makeMetrics())
				waitProjected(t, s)
				for table, want := range map[string]int{"logs": 3 * (i + 1), "spans": 2 * (i + 1), "number_points": 3 * (i + 1)} {
					if got := countRows(t, s, table); got != want {
						t.Errorf("open %d: %s rows: got %d, want %d", i, table, got, want)
					}
				}
				if got, want := len(s.shards), map[bool]int{true: 1, false: 2}[tc.want]; got != want {
					t.Errorf("open %d: %d projected databases, want %d", i, got, want)
				}
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			telemetry := fileTables(t, filepath.Join(dir, FileName))
			_, err := os.Stat(filepath.Join(dir, TracesFileName))
			if tc.want {
				if err == nil {
					t.Errorf("one file: %s exists", TracesFileName)
				}
				for _, table := range traceTables {
					if !slices.Contains(telemetry, table) {
						t.Errorf("one file: telemetry.db lacks %s", table)
					}
				}
				return
			}
			traces := fileTables(t, filepath.Join(dir, TracesFileName))
			for _, table := range traceTables {
				if slices.Contains(telemetry, table) || !slices.Contains(traces, table) {
					t.Errorf("two files: %s in telemetry.db %v, in traces.db %v; want only in traces.db",
						table, slices.Contains(telemetry, table), slices.Contains(traces, table))
				}
			}
			for _, table := range []string{"logs", "metrics", "number_points", "log_text", "log_blocks"} {
				if slices.Contains(traces, table) {
					t.Errorf("two files: traces.db holds %s", table)
				}
			}
		})
	}
}

// TestTracesFilePassesOtherSignals: traces.db's projector passes the raw rows of logs and
// metrics by, so with no traces at all its high-water mark still reaches the last raw row:
// the store's projected mark (the lower of the two) and the lag say everything is projected,
// and raw rows are pruned, which needs both marks durable.
func TestTracesFilePassesOtherSignals(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, Config{Dir: dir, TracesFile: true, Sync: SyncOff, RawRetention: 1, ProjectSlice: 4})
	for i := range 10 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprint("only logs ", i), 2))
	}
	appendMetrics(t, s, makeMetrics())
	waitProjected(t, s)
	st := s.Stats()
	if st.LagRecords != 0 || st.LagSeconds != 0 || st.Logs.RecordsProjected != 20 || st.Traces.RecordsProjected != 0 {
		t.Errorf("Stats: lag %d records, %v s, %d logs and %d spans projected; want 0, 0, 20, 0",
			st.LagRecords, st.LagSeconds, st.Logs.RecordsProjected, st.Traces.RecordsProjected)
	}
	got := queryRows(t, s.ReadDB(), `SELECT (SELECT raw_id FROM main.projection_state), (SELECT raw_id FROM traces.projection_state)`)
	if diff := cmp.Diff([][]string{{"11", "11"}}, got); diff != "" {
		t.Errorf("projection_state of telemetry.db, traces.db (-want +got):\n%s", diff)
	}
	// Pruning follows once the prune watcher found both marks durable.
	polltest.Until(t, "raw rows pruned", func() bool { return s.PrunedRawID() == 11 })
	if n := rawCount(t, s); n != 0 {
		t.Errorf("%d raw rows left after pruning", n)
	}
	checkIntegrity(t, s)
}

// TestTracesFileKeepsEveryRow: with two projectors, each staging its next slice while the
// current one commits, appends of every signal racing with them are all projected, once.
func TestTracesFileKeepsEveryRow(t *testing.T) {
	s := openTest(t, Config{TracesFile: true, Sync: SyncOff, ProjectSlice: 3})
	const appenders, rounds = 4, 40
	logs, err := logsMarshaler.MarshalLogs(makeLogs("svc", "raced", 2))
	if err != nil {
		t.Fatal(err)
	}
	spans, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(makeTraces())
	if err != nil {
		t.Fatal(err)
	}
	points, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(makeMetrics())
	if err != nil {
		t.Fatal(err)
	}
	payloads := []struct {
		sig     signal.Signal
		body    []byte
		records int
	}{{signal.Traces, spans, 2}, {signal.Logs, logs, 2}, {signal.Metrics, points, 3}}
	errs := make(chan error, appenders)
	for g := range appenders {
		go func() {
			for i := range rounds {
				p := payloads[(g+i)%len(payloads)]
				if err := s.Append(context.Background(), p.sig, p.body, p.records); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range appenders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	waitProjected(t, s)
	each := appenders * rounds / 3 // requests of each signal, give or take one
	nSpans, nLogs := countRows(t, s, "spans"), countRows(t, s, "logs")
	st := s.Stats()
	if uint64(nSpans) != st.Traces.RecordsProjected || uint64(nSpans) != st.Traces.Records || uint64(nLogs) != st.Logs.Records {
		t.Errorf("projected %d spans and %d logs; accepted %d spans, %d logs (%d spans projected)",
			nSpans, nLogs, st.Traces.Records, st.Logs.Records, st.Traces.RecordsProjected)
	}
	if nSpans < 2*(each-1) || nLogs < 2*(each-1) {
		t.Errorf("%d spans, %d logs: fewer than the appenders sent", nSpans, nLogs)
	}
	checkIntegrity(t, s)
}
