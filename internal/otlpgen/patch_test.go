package otlpgen

import (
	"bytes"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// TestStampMovesEveryTime decodes patched bodies of every signal with pdata: each record time
// (and a delta point's start) moved by exactly the shift, a cumulative or summary point's start
// did not, and with the shift taken back out the body encodes to the pool's bytes again, so
// nothing else changed.
func TestStampMovesEveryTime(t *testing.T) {
	const shift = int64(90 * time.Minute)
	pool, err := NewPool(Config{Records: 12, PoolSize: 16, BaseTime: base, Seed: 7}, signal.Logs, signal.Metrics, signal.Traces)
	if err != nil {
		t.Fatal(err)
	}
	if !pool.CanStamp() {
		t.Fatal("a protobuf pool cannot be stamped")
	}
	if got := pool.StampShift(base.Add(time.Duration(shift))); got != shift {
		t.Fatalf("StampShift = %d, want %d", got, shift)
	}
	// move checks that a stamped time is the pool's plus want, and returns the pool's.
	var moved, kept int
	move := func(stamped, orig pcommon.Timestamp, want int64) pcommon.Timestamp {
		t.Helper()
		if int64(stamped)-int64(orig) != want {
			t.Errorf("time %d stamped to %d, want a shift of %d", orig, stamped, want)
		}
		if want != 0 {
			moved++
		} else {
			kept++
		}
		return orig
	}
	var buf []byte
	for _, sig := range signal.All() {
		for _, p := range pool.Payloads(sig) {
			buf = p.Patch(buf, &Stamp{Shift: shift})
			if bytes.Equal(buf, p.Body) {
				t.Fatalf("%s: Stamp changed nothing", sig)
			}
			var back []byte
			switch sig {
			case signal.Logs:
				st, orig := plogotlp.NewExportRequest(), plogotlp.NewExportRequest()
				must(t, st.UnmarshalProto(buf), orig.UnmarshalProto(p.Body))
				sr, or := st.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords(), orig.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
				for i := range sr.Len() {
					sr.At(i).SetTimestamp(move(sr.At(i).Timestamp(), or.At(i).Timestamp(), shift))
					sr.At(i).SetObservedTimestamp(move(sr.At(i).ObservedTimestamp(), or.At(i).ObservedTimestamp(), shift))
				}
				back, err = st.MarshalProto()
			case signal.Traces:
				st, orig := ptraceotlp.NewExportRequest(), ptraceotlp.NewExportRequest()
				must(t, st.UnmarshalProto(buf), orig.UnmarshalProto(p.Body))
				for r := range st.Traces().ResourceSpans().Len() {
					ss, os := st.Traces().ResourceSpans().At(r).ScopeSpans().At(0).Spans(), orig.Traces().ResourceSpans().At(r).ScopeSpans().At(0).Spans()
					for i := range ss.Len() {
						s, o := ss.At(i), os.At(i)
						s.SetStartTimestamp(move(s.StartTimestamp(), o.StartTimestamp(), shift))
						s.SetEndTimestamp(move(s.EndTimestamp(), o.EndTimestamp(), shift))
						for e := range s.Events().Len() {
							s.Events().At(e).SetTimestamp(move(s.Events().At(e).Timestamp(), o.Events().At(e).Timestamp(), shift))
						}
					}
				}
				back, err = st.MarshalProto()
			case signal.Metrics:
				st, orig := pmetricotlp.NewExportRequest(), pmetricotlp.NewExportRequest()
				must(t, st.UnmarshalProto(buf), orig.UnmarshalProto(p.Body))
				ms, om := st.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics(), orig.Metrics().ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
				for i := range ms.Len() {
					unshiftPoints(ms.At(i), om.At(i), shift, move)
				}
				back, err = st.MarshalProto()
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, p.Body) {
				t.Fatalf("%s: the stamped body with its times taken back differs from the pool's", sig)
			}
		}
	}
	if moved == 0 || kept == 0 {
		t.Errorf("%d times moved and %d kept; the pool should have both (cumulative starts stay)", moved, kept)
	}
}

// unshiftPoints checks and takes back the shift of one metric's points: their time always,
// their start only for delta temporality.
func unshiftPoints(m, o pmetric.Metric, shift int64, move func(s, o pcommon.Timestamp, want int64) pcommon.Timestamp) {
	startShift := func(t pmetric.AggregationTemporality) int64 {
		if t == pmetric.AggregationTemporalityDelta {
			return shift
		}
		return 0
	}
	type point interface {
		Timestamp() pcommon.Timestamp
		SetTimestamp(pcommon.Timestamp)
		StartTimestamp() pcommon.Timestamp
		SetStartTimestamp(pcommon.Timestamp)
	}
	fix := func(s, o point, start int64) {
		s.SetTimestamp(move(s.Timestamp(), o.Timestamp(), shift))
		s.SetStartTimestamp(move(s.StartTimestamp(), o.StartTimestamp(), start))
	}
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for i := range m.Gauge().DataPoints().Len() {
			fix(m.Gauge().DataPoints().At(i), o.Gauge().DataPoints().At(i), 0)
		}
	case pmetric.MetricTypeSum:
		for i := range m.Sum().DataPoints().Len() {
			fix(m.Sum().DataPoints().At(i), o.Sum().DataPoints().At(i), startShift(m.Sum().AggregationTemporality()))
		}
	case pmetric.MetricTypeHistogram:
		for i := range m.Histogram().DataPoints().Len() {
			fix(m.Histogram().DataPoints().At(i), o.Histogram().DataPoints().At(i), startShift(m.Histogram().AggregationTemporality()))
		}
	case pmetric.MetricTypeExponentialHistogram:
		h := m.ExponentialHistogram()
		for i := range h.DataPoints().Len() {
			fix(h.DataPoints().At(i), o.ExponentialHistogram().DataPoints().At(i), startShift(h.AggregationTemporality()))
		}
	case pmetric.MetricTypeSummary:
		for i := range m.Summary().DataPoints().Len() {
			fix(m.Summary().DataPoints().At(i), o.Summary().DataPoints().At(i), 0)
		}
	}
}

func must(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPatchOnlyProtobuf: OTLP-JSON pools cannot be stamped, and Patch leaves their times (it
// only rewrites ids); compressed pools are patched uncompressed.
func TestPatchOnlyProtobuf(t *testing.T) {
	for _, cfg := range []Config{
		{Encoding: EncodingJSON},
		{Compression: CompressionGzip},
		{Compression: CompressionZstd},
	} {
		cfg.PoolSize, cfg.BaseTime = 2, base
		pool, err := NewPool(cfg, signal.Logs)
		if err != nil {
			t.Fatal(err)
		}
		p := pool.Get(signal.Logs, 0)
		got := p.Patch(nil, &Stamp{Shift: int64(time.Hour)})
		json := cfg.Encoding == EncodingJSON
		if pool.CanStamp() == json || bytes.Equal(got, p.raw) != json {
			t.Errorf("%s/%s: CanStamp %v, Patch changed the body %v; want %v, %v", cfg.Encoding, cfg.Compression,
				pool.CanStamp(), !bytes.Equal(got, p.raw), !json, !json)
		}
	}
}

// BenchmarkPatch is the cost of one live send's copy and patch, times, ids and values all on:
// a 100-record request of each signal with the load's default shape.
func BenchmarkPatch(b *testing.B) {
	pool, err := NewPool(Config{Records: 100, Attrs: DefaultAttrs, BodyBytes: DefaultBodyBytes, PoolSize: 1, BaseTime: base, LogTraceShare: DefaultLogTraceShare},
		signal.Logs, signal.Metrics, signal.Traces)
	if err != nil {
		b.Fatal(err)
	}
	for _, sig := range []signal.Signal{signal.Logs, signal.Metrics, signal.Traces} {
		p := pool.Get(sig, 0)
		b.Run(sig.String(), func(b *testing.B) {
			b.SetBytes(int64(len(p.Body)))
			var buf []byte
			st := Stamp{IDs: true, Values: true, RunID: 7, SentTraces: 100, LogSpans: 5}
			for i := 0; b.Loop(); i++ {
				st.Shift, st.Pass, st.TraceBase = int64(i), uint64(i), uint64(i)*10
				buf = p.Patch(buf, &st)
			}
			pl := p.plan
			b.ReportMetric(float64(len(pl.times)+len(pl.traceIDs)+len(pl.spanIDs)+2*len(pl.logIDs)+len(pl.counters)+len(pl.gauges)+len(pl.wiggles)), "fields")
		})
	}
}

// TestPatchCopyMatchesPatch: rewriting a copy patched for one send into another send's gives
// the bytes Patch gives for that send, whatever the two stamps, in both encodings.
func TestPatchCopyMatchesPatch(t *testing.T) {
	stamps := []Stamp{
		{},
		{Shift: 5e9, IDs: true, RunID: 3, TraceBase: 40, SentTraces: 90, LogSpans: 3, Values: true, Pass: 7},
		{Shift: -2e9, Values: true, Pass: 1},
		{IDs: true, RunID: 9, TraceBase: 1, SentTraces: 2, LogSpans: 1},
	}
	for _, enc := range []Encoding{EncodingProto, EncodingJSON} {
		pool, err := NewPool(Config{Records: 30, PoolSize: 2, BaseTime: base, Encoding: enc, LogTraceShare: 0.5}, signal.Logs, signal.Metrics, signal.Traces)
		if err != nil {
			t.Fatal(err)
		}
		for _, sig := range signal.All() {
			for _, p := range pool.Payloads(sig) {
				for i := range stamps {
					for j := range stamps {
						cp := p.Patch(nil, &stamps[i])
						p.PatchCopy(cp, &stamps[j])
						if want := p.Patch(nil, &stamps[j]); !bytes.Equal(cp, want) {
							t.Fatalf("%s %s: stamp %d rewritten to stamp %d differs from Patch's", enc, sig, i, j)
						}
					}
				}
			}
		}
	}
}
