package query

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

// servicesSlow is what Services computed before service_counts: aggregates over the tables.
func servicesSlow(t testing.TB, r *Reader) []Service {
	t.Helper()
	byName := map[string]*Service{}
	var names []string
	for _, q := range []struct {
		sql  string
		pick func(*Service) *SignalCount
	}{
		{`SELECT coalesce(service,''), count(*), max(time_unix_nano) FROM logs GROUP BY 1`, func(s *Service) *SignalCount { return &s.Logs }},
		{`SELECT coalesce(service,''), count(*), max(start_time_unix_nano) FROM spans GROUP BY 1`, func(s *Service) *SignalCount { return &s.Spans }},
		{`SELECT coalesce(service,''), count(*), 0 FROM metrics GROUP BY 1`, func(s *Service) *SignalCount { return &s.Metrics }},
	} {
		rows, err := r.db.Query(q.sql)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			var c SignalCount
			if err := rows.Scan(&name, &c.Records, &c.LastSeenUnixNano); err != nil {
				t.Fatal(err)
			}
			s, ok := byName[name]
			if !ok {
				s = &Service{Name: name}
				byName[name] = s
				names = append(names, name)
			}
			*q.pick(s) = c
		}
		rows.Close()
	}
	out := []Service{}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// TestServicesMatchAggregates checks Services (service_counts) against the aggregates over the
// tables, with logs, spans and metrics of overlapping services, one without service.name, with
// the spans in telemetry.db and in a traces.db of their own (which counts them).
func TestServicesMatchAggregates(t *testing.T) {
	for _, tracesFile := range []bool{false, true} {
		t.Run(fmt.Sprint("traces file ", tracesFile), func(t *testing.T) { testServicesMatchAggregates(t, tracesFile) })
	}
}

func testServicesMatchAggregates(t *testing.T, tracesFile bool) {
	st := querytest.OpenStoreConfig(t, store.Config{TracesFile: tracesFile})
	r := NewReader(st.ReadDB())
	base := time.Now().Add(-time.Hour)
	for round := range 3 {
		var logs []logSpec
		for i := range 50 {
			logs = append(logs, logSpec{Service: []string{"alpha", "beta", ""}[(i+round)%3], Body: fmt.Sprintf("line %d", i),
				At: base.Add(time.Duration((i*37)%50-round*10) * time.Second)})
		}
		querytest.AppendLogs(t, st, logs...)
		querytest.AppendSpans(t, st, spanSpec{Service: "beta", TraceID: traceA, SpanID: fmt.Sprintf("%016x", round+1), Name: "op",
			Start: base.Add(time.Duration(round) * time.Minute), End: base.Add(time.Duration(round)*time.Minute + time.Second)},
			spanSpec{Service: "gamma", TraceID: traceA, SpanID: fmt.Sprintf("%016x", round+100), Name: "op",
				Start: base.Add(-time.Duration(round) * time.Minute), End: base})
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", []string{"alpha", "delta"}[round%2])
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(fmt.Sprintf("m%d", round%2))
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(round))
		querytest.AppendMetrics(t, st, md)
		querytest.WaitProjected(t, st)

		got, err := r.Services(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(servicesSlow(t, r), got); diff != "" {
			t.Errorf("round %d: services (-aggregates +Services):\n%s", round, diff)
		}
	}
}
