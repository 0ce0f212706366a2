package store

import (
	"fmt"

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
						for _, p := range m.Gauge().DataPoints().All() {
							p.SetTimestamp(move(p.Timestamp()))
						}
					case pmetric.MetricTypeSum:
						for _, p := range m.Sum().DataPoints().All() {
							p.SetTimestamp(move(p.Timestamp()))
						}
					case pmetric.MetricTypeHistogram:
						for _, p := range m.Histogram().DataPoints().All() {
							p.SetTimestamp(move(p.Timestamp()))
						}
					case pmetric.MetricTypeExponentialHistogram:
						for _, p := range m.ExponentialHistogram().DataPoints().All() {
							p.SetTimestamp(move(p.Timestamp()))
						}
					case pmetric.MetricTypeSummary:
						for _, p := range m.Summary().DataPoints().All() {
							p.SetTimestamp(move(p.Timestamp()))
						}
					}
				}
			}
		}
		return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	}
	return nil, fmt.Errorf("restamp: unknown signal %v", sig)
}
