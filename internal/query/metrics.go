package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MetricName is one metric name with what is known about it.
type MetricName struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Unit        string   `json:"unit,omitempty"`
	Description string   `json:"description,omitempty"`
	Services    []string `json:"services"`
	Streams     int64    `json:"streams"`
}

// MetricNames lists metric names (optionally of one service).
func (r *Reader) MetricNames(ctx context.Context, service string) ([]MetricName, error) {
	w := &sqlWhere{}
	if service != "" {
		names, err := r.serviceNames(ctx, service)
		if err != nil {
			return nil, err
		}
		servicePred(w, "service", names)
	}
	rows, err := r.db.QueryContext(ctx, `SELECT name, type, max(unit), max(description),
		group_concat(DISTINCT coalesce(service,'')), count(*)
		FROM metrics WHERE `+w.String()+` GROUP BY name, type ORDER BY name, type`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("query metric names: %w", err)
	}
	defer rows.Close()
	out := []MetricName{}
	for rows.Next() {
		var m MetricName
		var services string
		if err := rows.Scan(&m.Name, &m.Type, &m.Unit, &m.Description, &services, &m.Streams); err != nil {
			return nil, fmt.Errorf("scan metric name: %w", err)
		}
		m.Services = strings.Split(services, ",")
		slices.Sort(m.Services)
		out = append(out, m)
	}
	return out, rows.Err()
}

// SeriesPoint is one step of a series. Number metrics fill Value;
// histograms, exponential histograms and summaries fill Count, Sum and the
// percentiles (from buckets, or the summary's own quantiles). A nil field
// means no data (or not computable) in that step.
type SeriesPoint struct {
	TimeUnixNano int64    `json:"t"`
	Value        *float64 `json:"value,omitempty"`
	Count        *float64 `json:"count,omitempty"`
	Sum          *float64 `json:"sum,omitempty"`
	P50          *float64 `json:"p50,omitempty"`
	P90          *float64 `json:"p90,omitempty"`
	P99          *float64 `json:"p99,omitempty"`
}

// Series is one service's values of a metric.
type Series struct {
	Service string `json:"service"`
	Type    string `json:"type"`
	Unit    string `json:"unit,omitempty"`
	// Resources are the attributes of the resources of the streams the
	// series aggregates (service.name, host.name, k8s.pod.name, ...), one
	// entry each, in resource id order; absent when none has any.
	Resources []RawJSON     `json:"resources,omitempty"`
	Points    []SeriesPoint `json:"points"`
}

// SeriesResult answers /metrics/series.
type SeriesResult struct {
	Name            string   `json:"name"`
	Agg             Agg      `json:"agg"`
	StepSeconds     float64  `json:"step_seconds"`
	SinceUnixNano   int64    `json:"since_unix_nano"`
	UntilUnixNano   int64    `json:"until_unix_nano"`
	Series          []Series `json:"series"`
	SkippedIncompat int      `json:"skipped_incompatible_points,omitempty"`
}

type metricStream struct {
	id, resource int64
	service      string
	typ          string
	unit         string
	temporality  int // 1 delta, 2 cumulative
}

// Series computes q's time series, one per (service, type).
func (r *Reader) Series(ctx context.Context, q SeriesQuery) (*SeriesResult, error) {
	release, err := r.heavy.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	w := &sqlWhere{}
	w.add("name = ?", q.Name)
	if q.Service != "" {
		names, err := r.serviceNames(ctx, q.Service)
		if err != nil {
			return nil, err
		}
		servicePred(w, "service", names)
	}
	// metrics holds one row per stream, so a subquery on resources is cheap.
	resourceSet{}.preds(w, "resource_id", "service", "main", q.Attrs)
	rows, err := r.db.QueryContext(ctx, `SELECT id, resource_id, coalesce(service,''), type, unit, temporality FROM metrics WHERE `+w.String()+
		` ORDER BY service, type, id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("query metric streams: %w", err)
	}
	groups := map[[2]string][]metricStream{}
	var keys [][2]string
	for rows.Next() {
		var m metricStream
		if err := rows.Scan(&m.id, &m.resource, &m.service, &m.typ, &m.unit, &m.temporality); err != nil {
			rows.Close()
			return nil, fmt.Errorf("scan metric stream: %w", err)
		}
		k := [2]string{m.service, m.typ}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query metric streams: %w", err)
	}
	resources, err := r.streamResources(ctx, groups)
	if err != nil {
		return nil, err
	}
	res := &SeriesResult{Name: q.Name, Agg: q.Agg, StepSeconds: q.Step.Seconds(),
		SinceUnixNano: q.Since, UntilUnixNano: q.Until, Series: []Series{}}
	for _, k := range keys {
		ms := groups[k]
		s := Series{Service: k[0], Type: k[1], Unit: ms[0].unit, Resources: seriesResources(ms, resources)}
		b := newStepper(q)
		switch k[1] {
		case "gauge", "sum":
			err = r.numberSeries(ctx, q, ms, b)
		case "histogram":
			err = r.histogramSeries(ctx, q, ms, b)
		case "exponential_histogram":
			err = r.expHistogramSeries(ctx, q, ms, b)
		case "summary":
			err = r.summarySeries(ctx, q, ms, b)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Points = b.points
		res.SkippedIncompat += b.skipped
		res.Series = append(res.Series, s)
	}
	return res, nil
}

// stepper collects per-step results in time order.
type stepper struct {
	q       SeriesQuery
	points  []SeriesPoint
	skipped int
}

func newStepper(q SeriesQuery) *stepper { return &stepper{q: q, points: []SeriesPoint{}} }

// stepOf returns the start of the step holding t.
func (b *stepper) stepOf(t int64) int64 {
	return b.q.Since + (t-b.q.Since)/int64(b.q.Step)*int64(b.q.Step)
}

// seekStreamsMax is the most streams a points query seeks one by one in each block; with more it
// reads each block's whole part of the index. In a database of 3.3M load-shaped points in 5,120
// streams (docs/benchmarks/store.md, scripts/bench-series.sh) the number points of 224 streams took
// 650 ms seeking and 1,070 scanning; of 1,024 streams, ~2.8 s both ways: a seek per stream costs
// ~1.5 µs a block, an index entry ~0.4, and a block holds 4,096 entries.
var seekStreamsMax = 1024 // a variable for tests

// pointsQuery returns the SQL and arguments that select cols (which must include
// time_unix_nano) from the points of streams ms in table, with times in [q.Since, q.Until), by
// time. The points indexes are keyed by (block, metric_id, time_unix_nano) (schema.sql): the
// query looks in each block that point_blocks says can hold the range.
func pointsQuery(table, cols string, ms []metricStream, q SeriesQuery) (string, []any) {
	args := make([]any, 0, 2+len(ms))
	args = append(args, q.Since, q.Until)
	var ids strings.Builder
	for i, m := range ms {
		if i > 0 {
			ids.WriteByte(',')
		}
		fmt.Fprintf(&ids, "?%d", i+3)
		args = append(args, m.id)
	}
	seek := "metric_id"
	if len(ms) > seekStreamsMax {
		seek = "+metric_id" // not from the index: scan each block's entries instead
	}
	// attr.* filters test each point's attributes (no index serves them).
	var attrs strings.Builder
	for _, f := range q.Attrs {
		if f.Resource {
			continue
		}
		pred, pargs := attrPred("attributes", f)
		parts := strings.Split(pred, "?") // number the placeholders: the query reuses ?1 and ?2
		attrs.WriteString(" AND " + parts[0])
		for i, a := range pargs {
			args = append(args, a)
			fmt.Fprintf(&attrs, "?%d%s", len(args), parts[i+1])
		}
	}
	return `SELECT ` + cols + ` FROM ` + table + ` WHERE block IN (SELECT block FROM point_blocks
			WHERE point_table = '` + table + `' AND max_time_unix_nano >= ?1 AND min_time_unix_nano < ?2)
		AND ` + seek + ` IN (` + ids.String() + `) AND time_unix_nano >= ?1 AND time_unix_nano < ?2` + attrs.String() + `
		ORDER BY time_unix_nano`, args
}

// queryPoints runs pointsQuery. The caller closes the rows.
func (r *Reader) queryPoints(ctx context.Context, table, cols string, ms []metricStream, q SeriesQuery) (*sql.Rows, error) {
	query, args := pointsQuery(table, cols, ms, q)
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", table, err)
	}
	return rows, nil
}

func temporalityOf(ms []metricStream) map[int64]int {
	t := make(map[int64]int, len(ms))
	for _, m := range ms {
		t[m.id] = m.temporality
	}
	return t
}

// numberSeries aggregates gauge and sum points per step. avg, min, max and
// count use every raw point; sum adds delta points, and for cumulative
// streams adds each stream's last value in the step; rate is the per-second
// increase (cumulative: per stream, resets restart from zero; delta: the
// step's sum); last is the newest point.
func (r *Reader) numberSeries(ctx context.Context, q SeriesQuery, ms []metricStream, b *stepper) error {
	rows, err := r.queryPoints(ctx, "number_points",
		`metric_id, attributes, time_unix_nano, coalesce(value_double, value_int, 0)`, ms, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	temp := temporalityOf(ms)
	type streamKey struct {
		id    int64
		attrs string
	}
	prev := map[streamKey]float64{}
	var cur int64 = -1
	var n, sum, lo, hi, last, inc float64
	lastPer := map[streamKey]float64{}
	flush := func() {
		if cur < 0 || n == 0 {
			return
		}
		var v float64
		switch q.Agg {
		case AggAvg:
			v = sum / n
		case AggSum:
			v = sum
			for _, x := range lastPer {
				v += x
			}
		case AggMin:
			v = lo
		case AggMax:
			v = hi
		case AggLast:
			v = last
		case AggCount:
			v = n
		case AggRate:
			v = inc / q.Step.Seconds()
		}
		b.points = append(b.points, SeriesPoint{TimeUnixNano: cur, Value: clampNaN(v)})
	}
	for rows.Next() {
		var k streamKey
		var t int64
		var v float64
		if err := rows.Scan(&k.id, &k.attrs, &t, &v); err != nil {
			return fmt.Errorf("scan number point: %w", err)
		}
		if st := b.stepOf(t); st != cur {
			flush()
			cur, n, sum, lo, hi, inc = st, 0, 0, math.Inf(1), math.Inf(-1), 0
			clear(lastPer)
		}
		n++
		lo, hi, last = math.Min(lo, v), math.Max(hi, v), v
		cumulative := temp[k.id] == 2
		if cumulative {
			if p, ok := prev[k]; ok {
				if v >= p {
					inc += v - p
				} else {
					inc += v // reset
				}
			}
			prev[k] = v
			lastPer[k] = v
			if q.Agg != AggSum {
				sum += v
			}
		} else {
			sum += v
			inc += v
		}
	}
	flush()
	return rows.Err()
}

// summarySeries reports each step's newest summary point: summaries carry
// precomputed quantiles that cannot be merged.
func (r *Reader) summarySeries(ctx context.Context, q SeriesQuery, ms []metricStream, b *stepper) error {
	rows, err := r.queryPoints(ctx, "summary_points", `time_unix_nano, count, sum, quantiles`, ms, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t int64
		var count uint64
		var sum float64
		var qj string
		if err := rows.Scan(&t, &count, &sum, &qj); err != nil {
			return fmt.Errorf("scan summary point: %w", err)
		}
		var qs []struct {
			Q float64 `json:"q"`
			V float64 `json:"v"`
		}
		_ = json.Unmarshal([]byte(qj), &qs) // malformed quantiles leave p50..p99 empty
		pick := func(want float64) float64 {
			for _, x := range qs {
				if math.Abs(x.Q-want) < 1e-9 {
					return x.V
				}
			}
			return math.NaN()
		}
		p := histPoint(b.stepOf(t), count, sum, pick(0.5), pick(0.9), pick(0.99))
		if n := len(b.points); n > 0 && b.points[n-1].TimeUnixNano == p.TimeUnixNano {
			b.points[n-1] = p
		} else {
			b.points = append(b.points, p)
		}
	}
	return rows.Err()
}
