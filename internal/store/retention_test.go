package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// appendMixed appends n requests of each signal: logs with bodies "<prefix> i", traces of one
// span with an event and a link, gauges.
func appendMixed(t testing.TB, s *Store, prefix string, n int) {
	t.Helper()
	for i := range n {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("%s-%d", prefix, i), 20))
		appendTraces(t, s, makeTraces())
		md := pmetric.NewMetrics()
		g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		g.SetName(prefix)
		dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetIntValue(int64(i))
		appendMetrics(t, s, md)
	}
}

// tableCounts counts the rows of the tables retention deletes from.
func tableCounts(t testing.TB, s *Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tb := range []string{"logs", "spans", "span_events", "span_links", "trace_chunks", "number_points", "log_blocks"} {
		out[tb] = countRows(t, s, tb)
	}
	return out
}

// TestRetentionDeletesOldData: rows projected before a mark older than the retention are
// deleted, with their log_text groups, events, links and trace chunks, and the rows after it
// stay; in both layouts.
func TestRetentionDeletesOldData(t *testing.T) {
	for _, tracesFile := range []bool{false, true} {
		t.Run(layoutName(!tracesFile), func(t *testing.T) {
			s := openTest(t, Config{Retention: 4 * time.Second, TracesFile: tracesFile, Logger: quietLogger})
			appendMixed(t, s, "old", 30)
			waitProjected(t, s)
			old := tableCounts(t, s)
			time.Sleep(2 * s.cfg.markEvery()) // a mark between the old rows and the new ones
			appendMixed(t, s, "new", 2)
			waitProjected(t, s)
			polltest.Until(t, "the old logs to go", func() bool {
				return countRows(t, s, "logs") <= 2*20 && countRows(t, s, "number_points") <= 2 && countRows(t, s, "spans") <= 2*2
			})
			got := tableCounts(t, s)
			for tb, n := range old {
				if got[tb] >= n && tb != "log_blocks" && tb != "trace_chunks" {
					t.Errorf("%s: %d rows after retention, want fewer than the %d before", tb, got[tb], n)
				}
			}
			if n := countRows(t, s, "logs WHERE body LIKE 'new-%'"); n != 2*20 {
				t.Errorf("new logs %d, want %d kept", n, 2*20)
			}
			if n := countRows(t, s, "spans"); n != 2*2 {
				t.Errorf("spans %d, want %d (the new traces')", n, 2*2)
			}
			if n := countRows(t, s, "trace_chunks WHERE last_span_id < (SELECT min(id) FROM spans)"); n != 0 {
				t.Errorf("%d trace chunks of deleted spans, want 0", n)
			}
			// "old": the group the last old and first new logs share may stay.
			if n := countRows(t, s, `log_text WHERE log_text MATCH '"6f6c64"'`); n > 1 {
				t.Errorf("log_text still holds %d groups with old logs, want at most 1", n)
			}
			if s.Stats().RetentionDeleted == 0 {
				t.Error("RetentionDeleted 0, want the rows deleted")
			}
		})
	}
}

// TestMaxDiskDeletesOldest: past MaxDiskBytes the oldest data goes whatever its age (all but
// each table's newest row, under a bound of one byte), projected raw rows are pruned without
// waiting for the raw retention, and Append answers ErrDiskFull without writing. The data is
// written before the bound is set: under it, no append is taken.
func TestMaxDiskDeletesOldest(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(context.Background(), Config{Dir: dir, Retention: time.Hour, RawRetention: time.Hour, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	appendMixed(t, first, "old", 10)
	appendLogs(t, first, makeLogs("svc", "trigger", 1))
	waitDurable(t, first)
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, Config{Dir: dir, Retention: time.Hour, RawRetention: time.Hour, MaxDiskBytes: 1, Logger: quietLogger})
	used, err := s.UsedBytes()
	if err != nil || used <= 1 {
		t.Fatalf("UsedBytes: %d, %v; want > 1", used, err)
	}
	polltest.Until(t, "all but the newest rows to go", func() bool {
		return countRows(t, s, "logs") == 1 && countRows(t, s, "spans") == 1 && countRows(t, s, "number_points") == 1
	})
	polltest.Until(t, "raw rows pruned at once", func() bool { return s.PrunedRawID() > 0 })
	// Pruning keeps deleted segments as spares (seglog), but not past the bound.
	polltest.Until(t, "spare raw segments released", func() bool {
		m, _ := filepath.Glob(filepath.Join(s.rawDir, "*.spare"))
		return len(m) == 0 && s.raw.Stats().Spares == 0
	})
	b, err := logsMarshaler.MarshalLogs(makeLogs("svc", "over", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(context.Background(), signal.Logs, b, 1); !errors.Is(err, ErrDiskFull) {
		t.Errorf("Append past the bound: %v, want ErrDiskFull", err)
	}
}
