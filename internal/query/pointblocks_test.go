package query

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

var pointTables = []string{"number_points", "histogram_points", "exp_histogram_points", "summary_points"}

// appendSeriesData appends rounds of points for 40 services, each with a gauge, a cumulative
// sum, a histogram, an exponential histogram and a summary; round r holds the 10-second steps
// [r*steps, (r+1)*steps), one request per step, with 1 in 20 steps' points arriving two
// requests late.
func appendSeriesData(t *testing.T, st *store.Store, base time.Time, first, steps int) {
	t.Helper()
	var late []pmetric.Metrics
	for step := first; step < first+steps; step++ {
		rng := rand.New(rand.NewPCG(uint64(step), 7)) // the same points however the steps are split
		ts := pcommon.NewTimestampFromTime(base.Add(time.Duration(step) * 10 * time.Second))
		md := pmetric.NewMetrics()
		for svc := range 40 {
			rm := md.ResourceMetrics().AppendEmpty()
			rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc%02d", svc))
			ms := rm.ScopeMetrics().AppendEmpty().Metrics()
			g := ms.AppendEmpty()
			g.SetName("load")
			gp := g.SetEmptyGauge().DataPoints().AppendEmpty()
			gp.SetTimestamp(ts)
			gp.SetDoubleValue(rng.Float64() * 100)
			s := ms.AppendEmpty()
			s.SetName("reqs")
			ss := s.SetEmptySum()
			ss.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			ss.SetIsMonotonic(true)
			sp := ss.DataPoints().AppendEmpty()
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(base))
			sp.SetTimestamp(ts)
			sp.SetIntValue(int64(step*(svc+1)) + rng.Int64N(3))
			h := ms.AppendEmpty()
			h.SetName("lat")
			hh := h.SetEmptyHistogram()
			hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			hp := hh.DataPoints().AppendEmpty()
			hp.SetTimestamp(ts)
			hp.ExplicitBounds().FromRaw([]float64{10, 50})
			c := []uint64{rng.Uint64N(5), rng.Uint64N(5), rng.Uint64N(5)}
			hp.BucketCounts().FromRaw(c)
			hp.SetCount(c[0] + c[1] + c[2])
			hp.SetSum(float64(hp.Count()) * 20)
			x := ms.AppendEmpty()
			x.SetName("size")
			xh := x.SetEmptyExponentialHistogram()
			xh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			xp := xh.DataPoints().AppendEmpty()
			xp.SetTimestamp(ts)
			xp.Positive().SetOffset(int32(rng.IntN(4)))
			xp.Positive().BucketCounts().FromRaw([]uint64{2, 3})
			xp.SetCount(5)
			q := ms.AppendEmpty()
			q.SetName("rpc")
			qp := q.SetEmptySummary().DataPoints().AppendEmpty()
			qp.SetTimestamp(ts)
			qp.SetCount(10)
			qp.SetSum(float64(step))
			qv := qp.QuantileValues().AppendEmpty()
			qv.SetQuantile(0.9)
			qv.SetValue(float64(step % 17))
		}
		if rng.IntN(20) == 0 {
			late = append(late, md)
			continue
		}
		querytest.AppendMetrics(t, st, md)
		if len(late) > 0 && rng.IntN(2) == 0 {
			querytest.AppendMetrics(t, st, late[0])
			late = late[1:]
		}
	}
	for _, md := range late {
		querytest.AppendMetrics(t, st, md)
	}
	querytest.WaitProjected(t, st)
}

// seriesQueries are the series the tests compare: each metric type over all 40 services and
// over one, over the whole range and over a window inside it, and a window past the data.
func seriesQueries(base time.Time, steps int) []SeriesQuery {
	end := base.Add(time.Duration(steps) * 10 * time.Second)
	ranges := [][2]time.Time{{base.Add(-time.Minute), end.Add(time.Minute)},
		{base.Add(time.Duration(steps/3) * 10 * time.Second), base.Add(time.Duration(steps/2) * 10 * time.Second)}}
	var qs []SeriesQuery
	for _, r := range ranges {
		for _, svc := range []string{"", "svc07"} {
			for _, m := range []struct {
				name string
				agg  Agg
			}{{"load", AggCount}, {"reqs", AggRate}, {"lat", AggAvg}, {"size", AggAvg}, {"rpc", AggAvg}} {
				qs = append(qs, SeriesQuery{Name: m.name, Service: svc, Since: r[0].UnixNano(), Until: r[1].UnixNano(),
					Step: 5 * time.Minute, Agg: m.agg})
			}
		}
	}
	return append(qs, SeriesQuery{Name: "load", Since: end.Add(time.Hour).UnixNano(), Until: end.Add(2 * time.Hour).UnixNano(),
		Step: 5 * time.Minute, Agg: AggCount})
}

// allSeries answers every query of qs, with the streams looked up one by one in each block
// (seek) or by scanning each block (scan).
func allSeries(t *testing.T, st *store.Store, qs []SeriesQuery, seekMax int) []*SeriesResult {
	t.Helper()
	defer func(v int) { seekStreamsMax = v }(seekStreamsMax)
	seekStreamsMax = seekMax
	r := NewReader(st.ReadDB())
	var out []*SeriesResult
	for _, q := range qs {
		res, err := r.Series(context.Background(), q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		out = append(out, res)
	}
	return out
}

// TestSeriesByBlocks answers the same series queries from points in blocks (seeking each
// stream, or scanning each block) and checks them against counts from the points rows
// themselves.
func TestSeriesByBlocks(t *testing.T) {
	base := time.Now().Add(-24 * time.Hour).Truncate(time.Hour)
	const steps = 120 // 40 services: 9,600 number points, 4,800 of each other type
	qs := seriesQueries(base, steps)

	fresh := openStoreDir(t, t.TempDir())
	defer closeStore(t, fresh)
	appendSeriesData(t, fresh, base, 0, steps)
	if got := queryCount(t, fresh.ReadDB(), `SELECT count(*) FROM point_blocks WHERE point_table = 'histogram_points'`); got < 2 {
		t.Fatalf("%d histogram point blocks: the data should span several", got)
	}
	want := allSeries(t, fresh, qs, seekStreamsMax)
	for i, q := range qs {
		if q.Agg != AggCount || q.Service != "" {
			continue
		}
		var n float64
		for _, s := range want[i].Series {
			for _, p := range s.Points {
				n += *p.Value
			}
		}
		rows := queryCount(t, fresh.ReadDB(), `SELECT count(*) FROM number_points p JOIN metrics m ON m.id = p.metric_id
			WHERE m.name = ? AND p.time_unix_nano >= ? AND p.time_unix_nano < ?`, q.Name, q.Since, q.Until)
		if int64(n) != rows {
			t.Errorf("%s count over [%d, %d): %v points in the series, %d rows", q.Name, q.Since, q.Until, n, rows)
		}
		if q.Since < base.UnixNano() && rows != 40*steps {
			// one stream per service of each number metric
			t.Errorf("%d %s points over the whole range, want %d", rows, q.Name, 40*steps)
		}
	}
	// The default seeks 40 streams; scanning is the same SQL for every table, checked on one
	// (the race detector makes each query slow).
	var numberQs []SeriesQuery
	var numberWant []*SeriesResult
	for i, q := range qs {
		if q.Name == "load" {
			numberQs, numberWant = append(numberQs, q), append(numberWant, want[i])
		}
	}
	if diff := cmp.Diff(numberWant, allSeries(t, fresh, numberQs, 0)); diff != "" {
		t.Errorf("scanning the blocks (-seeking +scanning):\n%s", diff)
	}
}

func queryCount(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestSeriesSeeksBlocks checks the plans of the points queries: a few streams are sought in
// each block the time range needs by (block, metric_id, time); many streams scan each such
// block's entries.
func TestSeriesSeeksBlocks(t *testing.T) {
	st := openStoreDir(t, t.TempDir())
	defer closeStore(t, st)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	appendSeriesData(t, st, base, 0, 10)
	q := SeriesQuery{Since: base.UnixNano(), Until: base.Add(time.Hour).UnixNano()}
	few := []metricStream{{id: 1}, {id: 2}}
	many := make([]metricStream, seekStreamsMax+1)
	for i := range many {
		many[i].id = int64(i + 1)
	}
	for _, table := range pointTables {
		for name, c := range map[string]struct {
			ms   []metricStream
			want []string
		}{
			"few": {few, []string{
				"SEARCH " + table + " USING INDEX " + table + "_block (block=? AND metric_id=? AND time_unix_nano>? AND time_unix_nano<?)",
				"SEARCH point_blocks USING PRIMARY KEY (point_table=?)",
			}},
			"many": {many, []string{
				"SEARCH " + table + " USING INDEX " + table + "_block (block=?)",
			}},
		} {
			query, args := pointsQuery(table, "metric_id, attributes, time_unix_nano", c.ms, q)
			plan := explain(t, st.ReadDB(), query, args...)
			for _, w := range c.want {
				if !strings.Contains(plan, w) {
					t.Errorf("%s, %s streams: plan lacks %q:\n%s", table, name, w, plan)
				}
			}
		}
	}
}
