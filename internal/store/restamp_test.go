package store

import (
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/signal"
)

// restamp returns the OTLP protobuf request body of sig with every record time moved by d
// nanoseconds (zero times stay zero): what a live agent sends where a replayed pool repeats its
// times. Start times of cumulative points stay, as a live counter's do.
func restamp(sig signal.Signal, body []byte, d int64) ([]byte, error) {
	move := func(t pcommon.Timestamp) pcommon.Timestamp {
		if t == 0 {
			return 0
		}
		return pcommon.Timestamp(int64(t) + d)
	}
	switch sig {
	case signal.Logs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
		if err != nil {
			return nil, err
		}
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, r := range sl.LogRecords().All() {
					r.SetTimestamp(move(r.Timestamp()))
					r.SetObservedTimestamp(move(r.ObservedTimestamp()))
				}
			}
		}
		return (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	case signal.Traces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		if err != nil {
			return nil, err
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					s.SetStartTimestamp(move(s.StartTimestamp()))
					s.SetEndTimestamp(move(s.EndTimestamp()))
					for _, e := range s.Events().All() {
						e.SetTimestamp(move(e.Timestamp()))
					}
				}
			}
		}
		return (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	case signal.Metrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body)
		if err != nil {
			return nil, err
		}
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					switch m.Type() {
					case pmetric.MetricTypeGauge:
						movePoints(m.Gauge().DataPoints().All(), move)
					case pmetric.MetricTypeSum:
						movePoints(m.Sum().DataPoints().All(), move)
					case pmetric.MetricTypeHistogram:
						movePoints(m.Histogram().DataPoints().All(), move)
					case pmetric.MetricTypeExponentialHistogram:
						movePoints(m.ExponentialHistogram().DataPoints().All(), move)
					case pmetric.MetricTypeSummary:
						movePoints(m.Summary().DataPoints().All(), move)
					}
				}
			}
		}
		return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	}
	return nil, fmt.Errorf("restamp: unknown signal %v", sig)
}

// movePoints moves the time of every data point of points.
func movePoints[P interface {
	Timestamp() pcommon.Timestamp
	SetTimestamp(pcommon.Timestamp)
}](points iter.Seq2[int, P], move func(pcommon.Timestamp) pcommon.Timestamp) {
	for _, p := range points {
		p.SetTimestamp(move(p.Timestamp()))
	}
}

// TestRestamp: restamp moves the times of the load's records of every signal, and of every
// metric point type the load sends.
func TestRestamp(t *testing.T) {
	const d = int64(time.Second)
	for _, sig := range []signal.Signal{signal.Logs, signal.Traces, signal.Metrics} {
		body := loadShaped(sig)(10)[0]
		moved, err := restamp(sig, body, d)
		if err != nil {
			t.Fatal(err)
		}
		before, after := recordTimes(t, sig, body), recordTimes(t, sig, moved)
		if len(before) == 0 || len(before) != len(after) {
			t.Fatalf("%v: %d times before, %d after", sig, len(before), len(after))
		}
		for i := range before {
			if after[i]-before[i] != d {
				t.Errorf("%v: time %d moved by %d, want %d", sig, i, after[i]-before[i], d)
			}
		}
	}
}

// recordTimes lists the time of every log record, the start of every span, and the time of
// every metric data point of an OTLP protobuf body.
func recordTimes(t *testing.T, sig signal.Signal, body []byte) []int64 {
	t.Helper()
	var out []int64
	switch sig {
	case signal.Logs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, r := range sl.LogRecords().All() {
					out = append(out, int64(r.Timestamp()))
				}
			}
		}
	case signal.Traces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, int64(s.StartTimestamp()))
				}
			}
		}
	case signal.Metrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(body)
		if err != nil {
			t.Fatal(err)
		}
		// Every point type keeps its time in the same place: the JSON form names it.
		js, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"timeUnixNano":"(\d+)"`).FindAllSubmatch(js, -1) {
			v, _ := strconv.ParseInt(string(m[1]), 10, 64)
			out = append(out, v)
		}
	}
	return out
}
