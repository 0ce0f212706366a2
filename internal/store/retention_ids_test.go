package store

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// appendPod appends one request of each signal from the pod named name: its own resource
// (service.name and host.name), scope and metric stream, so that each pod adds a row to
// resources, scopes and metrics.
func appendPod(t testing.TB, s *Store, name, body string) {
	t.Helper()
	resource := func(r pcommon.Resource) {
		r.Attributes().PutStr("service.name", name)
		r.Attributes().PutStr("host.name", "host-"+name)
	}
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	resource(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("scope-" + name)
	for i := range 3 {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.Body().SetStr(fmt.Sprintf("%s %s %d", body, name, i))
	}
	appendLogs(t, s, ld)

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	resource(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scope-" + name)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, byte(len(name)), byte(len(body))})
	sp.SetSpanID(pcommon.SpanID{2, byte(len(body))})
	sp.SetName(body + " " + name)
	appendTraces(t, s, td)

	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	resource(rm.Resource())
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("scope-" + name)
	g := sm.Metrics().AppendEmpty()
	g.SetName("gauge-" + name)
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(len(body)))
	appendMetrics(t, s, md)
}

// TestRetentionSweepsUnusedIDs: once retention has deleted every row of a set of pods, their
// resources, scopes and metric streams go too; the same pods sent again are stored under rows
// of their own, never under a deleted id that the projector's caches still held, and read back
// with their attributes. In both layouts.
func TestRetentionSweepsUnusedIDs(t *testing.T) {
	const pods = 40
	for _, tracesFile := range []bool{false, true} {
		t.Run(layoutName(!tracesFile), func(t *testing.T) {
			s := openTest(t, Config{Retention: 6 * time.Second, TracesFile: tracesFile, Logger: quietLogger})
			spans := "" // the schema of the span tables and of their resources and scopes
			if tracesFile {
				spans = "traces."
			}
			owners := []string{"", spans} // the schemas whose resources and scopes rows name
			for i := range pods {
				appendPod(t, s, fmt.Sprintf("pod-%d", i), "old")
			}
			waitProjected(t, s)
			for _, db := range owners {
				if n := countRows(t, s, db+"resources WHERE service_name LIKE 'pod-%'"); n != pods {
					t.Fatalf("%sresources: %d pods, want %d", db, n, pods)
				}
			}
			time.Sleep(2 * s.cfg.markEvery()) // a mark between the pods' rows and the next
			appendPod(t, s, "keeper", "new")  // the newest rows and ids, which retention keeps
			waitProjected(t, s)

			polltest.Until(t, "the pods' resources, scopes and metric streams to go", func() bool {
				n := countRows(t, s, "metrics WHERE name LIKE 'gauge-pod-%'")
				for _, db := range owners {
					n += countRows(t, s, db+"resources WHERE service_name LIKE 'pod-%'")
					n += countRows(t, s, db+"scopes WHERE name LIKE 'scope-pod-%'")
				}
				return n == 0
			})
			for _, q := range []string{"logs", spans + "spans", "number_points", "metrics WHERE name = 'gauge-keeper'",
				"resources WHERE service_name = 'keeper'", spans + "resources WHERE service_name = 'keeper'"} {
				if n := countRows(t, s, q); n == 0 {
					t.Errorf("%s: none left, want the keeper's", q)
				}
			}

			// The same pods again: the projector had their ids cached.
			for i := range pods {
				appendPod(t, s, fmt.Sprintf("pod-%d", i), "again")
			}
			waitProjected(t, s)
			checks := []struct {
				name, q string
				want    int
			}{
				{"logs stored again", "logs WHERE body LIKE 'again pod-%'", 3 * pods},
				{"logs with their pod's resource", `logs l JOIN resources r ON r.id = l.resource_id
					WHERE l.body LIKE 'again pod-%' AND r.service_name = l.service
					AND r.attributes ->> '$."host.name"' = 'host-' || l.service`, 3 * pods},
				{"logs with their pod's scope", `logs l JOIN scopes c ON c.id = l.scope_id
					WHERE l.body LIKE 'again pod-%' AND c.name = 'scope-' || l.service`, 3 * pods},
				{"spans with their pod's resource and scope", `` + spans + `spans p JOIN ` + spans + `resources r ON r.id = p.resource_id
					JOIN ` + spans + `scopes c ON c.id = p.scope_id
					WHERE p.name LIKE 'again pod-%' AND p.name = 'again ' || r.service_name
					AND r.attributes ->> '$."host.name"' = 'host-' || r.service_name AND c.name = 'scope-' || r.service_name`, pods},
				{"points with their pod's metric stream", `number_points p JOIN metrics m ON m.id = p.metric_id
					JOIN resources r ON r.id = m.resource_id JOIN scopes c ON c.id = m.scope_id
					WHERE p.value_int = 5 AND m.name = 'gauge-' || r.service_name AND c.name = 'scope-' || r.service_name
					AND r.attributes ->> '$."host.name"' = 'host-' || r.service_name`, pods},
				{"logs naming a deleted resource", "logs WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
				{"logs naming a deleted scope", "logs WHERE scope_id NOT IN (SELECT id FROM scopes)", 0},
				{"spans naming a deleted resource", spans + "spans WHERE resource_id NOT IN (SELECT id FROM " + spans + "resources)", 0},
				{"points naming a deleted metric stream", "number_points WHERE metric_id NOT IN (SELECT id FROM metrics)", 0},
				{"metric streams naming a deleted resource", "metrics WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
			}
			for _, c := range checks {
				if got := countRows(t, s, c.q); got != c.want {
					t.Errorf("%s: got %d rows, want %d", c.name, got, c.want)
				}
			}
		})
	}
}

// TestRetentionSweepKeepsIDsInUse: pods that keep sending while sweeps run keep their
// resources, scopes and metric streams, though retention deletes their older rows, and no row
// ever names a deleted one; pods gone quiet are swept meanwhile.
func TestRetentionSweepKeepsIDsInUse(t *testing.T) {
	const pods = 20
	s := openTest(t, Config{Retention: 2 * time.Second, Logger: quietLogger})
	for i := range pods {
		appendPod(t, s, fmt.Sprintf("quiet-%d", i), "old")
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; time.Now().Before(deadline) || countRows(t, s, "resources WHERE service_name LIKE 'quiet-%'") > 0; i++ {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("timed out waiting for the quiet pods' resources to go")
		}
		appendPod(t, s, fmt.Sprintf("live-%d", i%pods), "live")
		if i%pods == 0 {
			waitProjected(t, s) // slices between the sweep's steps
		}
	}
	waitProjected(t, s)
	for _, c := range []struct {
		name, q string
		want    int
	}{
		{"live pods' resources", "resources WHERE service_name LIKE 'live-%'", pods},
		{"logs naming a deleted resource", "logs WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
		{"logs naming a deleted scope", "logs WHERE scope_id NOT IN (SELECT id FROM scopes)", 0},
		{"spans naming a deleted resource", "spans WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
		{"spans naming a deleted scope", "spans WHERE scope_id NOT IN (SELECT id FROM scopes)", 0},
		{"points naming a deleted metric stream", "number_points WHERE metric_id NOT IN (SELECT id FROM metrics)", 0},
		{"metric streams naming a deleted resource", "metrics WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
	} {
		if got := countRows(t, s, c.q); got != c.want {
			t.Errorf("%s: got %d rows, want %d", c.name, got, c.want)
		}
	}
}

// TestSweepKeepsIDsUsedDuringIt drives one sweep by hand: a pod whose rows at the sweep's
// begin are all deleted while it runs, but that sent again after the begin, keeps its
// resource, scope and metric stream, which its new rows name; a pod that did not send again
// loses them.
func TestSweepKeepsIDsUsedDuringIt(t *testing.T) {
	s := openTest(t, Config{Retention: -1, Logger: quietLogger}) // no retainer: the test steps
	sh := s.shards[0]
	appendPod(t, s, "returning", "old")
	appendPod(t, s, "gone", "old")
	appendPod(t, s, "newest", "old") // the newest ids at the begin, which the sweep keeps
	waitProjected(t, s)
	s.retain.deleted.Add(1) // as if retention had deleted rows
	if more, err := s.sweepStep(sh); err != nil || !more {
		t.Fatalf("sweepStep to begin: %v, %v; want true, nil", more, err)
	}
	appendPod(t, s, "returning", "again") // its ids resolved from the projector's caches
	waitProjected(t, s)
	err := sh.conn.Do(func(c *sqlitec.Conn) error { // retention deletes the rows sent before the begin
		return c.Exec(`DELETE FROM logs WHERE body LIKE 'old %'; DELETE FROM spans WHERE name LIKE 'old %';
			DELETE FROM number_points WHERE value_int = 3 AND metric_id IN (SELECT id FROM metrics WHERE name <> 'gauge-newest')`)
	})
	if err != nil {
		t.Fatal(err)
	}
	for more := true; more; {
		if more, err = s.sweepStep(sh); err != nil {
			t.Fatal(err)
		}
	}
	// A second sweep, though retention deleted nothing since the first: the gone pod's resource
	// and scope were named by its metric stream, which the first deleted.
	s.retain.sweeps[sh.index].began = time.Time{}
	for more := true; more; {
		if more, err = s.sweepStep(sh); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, q string
		want    int
	}{
		{"the returning pod's resource", "resources WHERE service_name = 'returning'", 1},
		{"the returning pod's scope", "scopes WHERE name = 'scope-returning'", 1},
		{"the returning pod's metric stream", "metrics WHERE name = 'gauge-returning'", 1},
		{"the gone pod's resource", "resources WHERE service_name = 'gone'", 0},
		{"the gone pod's scope", "scopes WHERE name = 'scope-gone'", 0},
		{"the gone pod's metric stream", "metrics WHERE name = 'gauge-gone'", 0},
		{"logs naming a deleted resource", "logs WHERE resource_id NOT IN (SELECT id FROM resources)", 0},
		{"spans naming a deleted scope", "spans WHERE scope_id NOT IN (SELECT id FROM scopes)", 0},
		{"points naming a deleted metric stream", "number_points WHERE metric_id NOT IN (SELECT id FROM metrics)", 0},
	} {
		if got := countRows(t, s, c.q); got != c.want {
			t.Errorf("%s: got %d rows, want %d", c.name, got, c.want)
		}
	}
}
