package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/crashtest"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
)

const crashChildEnv = "OTELBENCH_STORE_CRASH_CHILD"

// runCrashChild is the child half of TestCrashKill9: it appends 1-record log requests from
// several goroutines, and 1-span trace requests from as many, and prints "ack BODY" after each
// Append returns nil (BODY is the log's body or the span's name), until it is killed (or a
// bound on count and time is reached, so a lost parent cannot leave it running).
func runCrashChild() int {
	dir := os.Getenv(crashChildEnv)
	s, err := Open(context.Background(), Config{Dir: dir, TracesFile: os.Getenv(crashChildEnv+"_TRACES_FILE") != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	crashtest.AckEach(8, 5000, 30*time.Second, func(g, n int) (string, error) {
		body := fmt.Sprintf("crash-%s-%d-%d", os.Getenv(crashChildEnv+"_ROUND"), g, n)
		sig, b := signal.Logs, []byte(nil)
		if g%2 == 0 {
			var m = makeLogs("crash", body, 1)
			m.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(body)
			b, _ = logsMarshaler.MarshalLogs(m)
		} else {
			td := ptrace.NewTraces()
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", "crash")
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetName(body)
			sp.SetTraceID(pcommon.TraceID{1, byte(g), byte(n >> 8), byte(n)})
			sp.SetSpanID(pcommon.SpanID{1, byte(g), byte(n >> 8), byte(n)})
			sig = signal.Traces
			b, _ = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		}
		return body, s.Append(context.Background(), sig, b, 1)
	})
	s.Close(context.Background())
	return 0
}

// TestCrashKill9 runs a child process appending logs and traces under concurrent load, kills it
// with SIGKILL once it has acknowledged some appends, and reopens the database: it must open
// cleanly, hold every acknowledged record exactly once after projection catches up, and pass
// integrity_check; with the spans in telemetry.db and in a traces.db of their own.
func TestCrashKill9(t *testing.T) {
	for _, oneFile := range []bool{true, false} {
		t.Run(layoutName(oneFile), func(t *testing.T) { testCrashKill9(t, !oneFile) })
	}
}

func testCrashKill9(t *testing.T, tracesFile bool) {
	dir := t.TempDir()
	for round := range 2 { // the second round crashes a database that already crashed once
		acked := crashChild(t, dir, round, 200*(round+1), tracesFile)
		s, err := Open(context.Background(), Config{Dir: dir})
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		if got := len(s.shards) > 1; got != tracesFile {
			t.Fatalf("round %d: traces.db in use %v, want %v", round, got, tracesFile)
		}
		waitProjected(t, s)
		checkIntegrity(t, s)
		present := map[string]int{}
		for _, row := range queryRows(t, s.ReadDB(), `SELECT body, count(*) FROM logs GROUP BY body
			UNION ALL SELECT name, count(*) FROM spans GROUP BY name`) {
			var n int
			fmt.Sscan(row[1], &n)
			present[row[0]] = n
		}
		missing := 0
		for _, body := range acked {
			if present[body] != 1 {
				missing++
				if missing < 5 {
					t.Errorf("round %d: acked record %q present %d times, want 1", round, body, present[body])
				}
			}
		}
		for body, n := range present {
			if n != 1 {
				t.Errorf("round %d: record %q present %d times", round, body, n)
			}
		}
		var rawRecords int64
		var stored int
		if err := s.ScanRaw(func(r rawlog.Row) error { rawRecords += r.Records; return nil }); err != nil {
			t.Fatalf("round %d: scan raw records: %v", round, err)
		}
		if err := s.ReadDB().QueryRow(`SELECT (SELECT count(*) FROM logs) + (SELECT count(*) FROM spans)`).Scan(&stored); err != nil {
			t.Fatalf("round %d: count stored rows: %v", round, err)
		}
		if rawRecords != int64(stored) {
			t.Errorf("round %d: raw holds %d records, logs and spans %d rows", round, rawRecords, stored)
		}
		t.Logf("round %d: %d acked, %d stored", round, len(acked), stored)
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// crashChild starts the child on dir, waits for minAcks acknowledgements, kills it with SIGKILL
// and returns every acknowledged body (including those it printed just before dying).
func crashChild(t *testing.T, dir string, round, minAcks int, tracesFile bool) []string {
	t.Helper()
	env := []string{crashChildEnv + "=" + dir, fmt.Sprintf("%s_ROUND=%d", crashChildEnv, round)}
	if tracesFile {
		env = append(env, crashChildEnv+"_TRACES_FILE=1")
	}
	return crashtest.KillAfterAcks(t, env, minAcks)
}

// checkIntegrity reads the whole raw log (each record's checksum verified), runs SQLite's
// integrity_check on the projected databases and FTS5's integrity-check, which verifies the
// trigram index matches the logs bodies exactly (no lost or duplicate rows).
func checkIntegrity(t testing.TB, s *Store) {
	t.Helper()
	if err := s.ScanRaw(func(rawlog.Row) error { return nil }); err != nil {
		t.Errorf("read the raw log: %v", err)
	}
	checks := []string{`PRAGMA main.integrity_check`}
	if len(s.shards) > 1 {
		checks = append(checks, `PRAGMA traces.integrity_check`)
	}
	for _, q := range checks {
		var res string
		if err := s.ReadDB().QueryRow(q).Scan(&res); err != nil || res != "ok" {
			t.Errorf("%s: got %q (%v), want ok", q, res, err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+s.TelemetryPath()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO log_text(log_text, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Errorf("FTS integrity-check: %v", err)
	}
}
