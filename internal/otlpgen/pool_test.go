package otlpgen

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/validtest"
)

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func decompress(t *testing.T, p Payload) []byte {
	t.Helper()
	switch p.ContentEncoding {
	case "":
		return p.Body
	case "gzip":
		r, err := gzip.NewReader(bytes.NewReader(p.Body))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	case "zstd":
		d, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		b, err := d.DecodeAll(p.Body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("content encoding %q", p.ContentEncoding)
	return nil
}

// decode unmarshals a payload with pdata and returns its record count.
func decode(t *testing.T, p Payload, enc Encoding) (int, any) {
	t.Helper()
	raw := decompress(t, p)
	if len(raw) != p.RawBytes {
		t.Errorf("raw size %d, want %d", len(raw), p.RawBytes)
	}
	un := func(j, pb func([]byte) error) {
		var err error
		if enc == EncodingJSON {
			err = j(raw)
		} else {
			err = pb(raw)
		}
		if err != nil {
			t.Fatalf("decode %s %s: %v", p.Signal, enc, err)
		}
	}
	switch p.Signal {
	case signal.Logs:
		req := plogotlp.NewExportRequest()
		un(req.UnmarshalJSON, req.UnmarshalProto)
		return req.Logs().LogRecordCount(), req.Logs()
	case signal.Metrics:
		req := pmetricotlp.NewExportRequest()
		un(req.UnmarshalJSON, req.UnmarshalProto)
		return req.Metrics().DataPointCount(), req.Metrics()
	case signal.Traces:
		req := ptraceotlp.NewExportRequest()
		un(req.UnmarshalJSON, req.UnmarshalProto)
		return req.Traces().SpanCount(), req.Traces()
	}
	return 0, nil
}

func TestPoolDecodesWithRequestedCounts(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"proto none", Config{Records: 7, Attrs: 3, PoolSize: 4, Encoding: EncodingProto}},
		{"json none", Config{Records: 12, Attrs: 2, PoolSize: 3, Encoding: EncodingJSON}},
		{"proto gzip", Config{Records: 1, PoolSize: 5, Compression: CompressionGzip}},
		{"json zstd", Config{Records: 33, SpansPerTrace: 4, PoolSize: 2, Encoding: EncodingJSON, Compression: CompressionZstd}},
		{"no attrs empty body", Config{Records: 5, Attrs: 0, BodyBytes: 0, PoolSize: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.BaseTime = base
			p, err := NewPool(tt.cfg, allSignals[:]...)
			if err != nil {
				t.Fatal(err)
			}
			enc := p.Config().Encoding
			for _, sig := range signal.All() {
				ps := p.Payloads(sig)
				if len(ps) != tt.cfg.PoolSize {
					t.Fatalf("%s pool size %d, want %d", sig, len(ps), tt.cfg.PoolSize)
				}
				for _, pl := range ps {
					got, _ := decode(t, pl, enc)
					if got != tt.cfg.Records || pl.Records != tt.cfg.Records {
						t.Errorf("%s records decoded %d, payload says %d, want %d", sig, got, pl.Records, tt.cfg.Records)
					}
					if pl.ContentType != enc.ContentType() {
						t.Errorf("content type %q, want %q", pl.ContentType, enc.ContentType())
					}
				}
			}
		})
	}
}

func TestMetricTypesAndTemporality(t *testing.T) {
	for _, temp := range []Temporality{"", TemporalityDelta} {
		t.Run(string(temp), func(t *testing.T) {
			p, err := NewPool(Config{Records: 10, PoolSize: 2, BaseTime: base, Temporality: temp}, signal.Metrics)
			if err != nil {
				t.Fatal(err)
			}
			want := pmetric.AggregationTemporalityCumulative
			if temp == TemporalityDelta {
				want = pmetric.AggregationTemporalityDelta
			}
			seen := map[pmetric.MetricType]int{}
			monotonic := map[bool]bool{}
			for _, pl := range p.Payloads(signal.Metrics) {
				_, v := decode(t, pl, EncodingProto)
				ms := v.(pmetric.Metrics).ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
				for i := range ms.Len() {
					m := ms.At(i)
					seen[m.Type()]++
					var got pmetric.AggregationTemporality
					switch m.Type() {
					case pmetric.MetricTypeSum:
						monotonic[m.Sum().IsMonotonic()] = true
						if got = m.Sum().AggregationTemporality(); !m.Sum().IsMonotonic() {
							got = want // an up-down counter stays cumulative
							if m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
								t.Errorf("up-down counter temporality %v, want cumulative", m.Sum().AggregationTemporality())
							}
						}
					case pmetric.MetricTypeHistogram:
						got = m.Histogram().AggregationTemporality()
					case pmetric.MetricTypeExponentialHistogram:
						got = m.ExponentialHistogram().AggregationTemporality()
					default:
						got = want
					}
					if got != want {
						t.Errorf("%s temporality %v, want %v", m.Name(), got, want)
					}
					if err := consistent(m); err != nil {
						t.Error(err)
					}
				}
			}
			for _, typ := range []pmetric.MetricType{pmetric.MetricTypeGauge, pmetric.MetricTypeSum, pmetric.MetricTypeHistogram,
				pmetric.MetricTypeExponentialHistogram, pmetric.MetricTypeSummary} {
				if seen[typ] == 0 {
					t.Errorf("metric type %v missing", typ)
				}
			}
			if !monotonic[true] || !monotonic[false] {
				t.Errorf("sums monotonic=%v, want both monotonic and non-monotonic", monotonic)
			}
		})
	}
}

func TestTraceTrees(t *testing.T) {
	const records, per = 23, 5
	p, err := NewPool(Config{Records: records, SpansPerTrace: per, PoolSize: 3, BaseTime: base}, signal.Traces)
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range p.Payloads(signal.Traces) {
		_, v := decode(t, pl, EncodingProto)
		spans := allSpans(v.(ptrace.Traces))
		byID := map[pcommon.SpanID]ptrace.Span{}
		traces := map[pcommon.TraceID]int{}
		roots := 0
		for i := range spans.Len() {
			s := spans.At(i)
			byID[s.SpanID()] = s
			traces[s.TraceID()]++
		}
		for i := range spans.Len() {
			s := spans.At(i)
			if s.ParentSpanID().IsEmpty() {
				roots++
				continue
			}
			parent, ok := byID[s.ParentSpanID()]
			if !ok {
				t.Fatalf("span %v: parent %v not in payload", s.SpanID(), s.ParentSpanID())
			}
			if parent.TraceID() != s.TraceID() {
				t.Errorf("span %v: parent in another trace", s.SpanID())
			}
			if s.StartTimestamp() < parent.StartTimestamp() || s.EndTimestamp() > parent.EndTimestamp() || s.EndTimestamp() <= s.StartTimestamp() {
				t.Errorf("span %v [%d,%d] not nested in parent [%d,%d]", s.SpanID(), s.StartTimestamp(), s.EndTimestamp(), parent.StartTimestamp(), parent.EndTimestamp())
			}
		}
		wantTraces := (records + per - 1) / per
		if len(traces) != wantTraces || roots != wantTraces || pl.Traces != wantTraces {
			t.Errorf("got %d traces and %d roots, want %d", len(traces), roots, wantTraces)
		}
	}
}

func TestJSONFollowsOTLPJSONRules(t *testing.T) {
	p, err := NewPool(Config{Records: 3, PoolSize: 1, Encoding: EncodingJSON, BaseTime: base}, signal.Traces, signal.Logs)
	if err != nil {
		t.Fatal(err)
	}
	traces := string(p.Payloads(signal.Traces)[0].Body)
	checks := []struct {
		name string
		re   string
		want bool
	}{
		{"hex trace id", `"traceId":"[0-9a-f]{32}"`, true},
		{"hex span id", `"spanId":"[0-9a-f]{16}"`, true},
		{"integer span kind", `"kind":[0-9]`, true},
		{"camelCase keys", `"resourceSpans"`, true},
		{"string nanos", `"startTimeUnixNano":"[0-9]+"`, true},
		{"no snake_case", `"trace_id"|"resource_spans"`, false},
		{"no enum names", `SPAN_KIND_`, false},
	}
	for _, c := range checks {
		if got := regexp.MustCompile(c.re).MatchString(traces); got != c.want {
			t.Errorf("%s: match %v, want %v", c.name, got, c.want)
		}
	}
	logs := string(p.Payloads(signal.Logs)[0].Body)
	if !regexp.MustCompile(`"severityNumber":[0-9]+`).MatchString(logs) || strings.Contains(logs, "SEVERITY_NUMBER_") {
		t.Errorf("log severity not an integer enum: %.300s", logs)
	}
}

func TestSeedReproducible(t *testing.T) {
	cfg := Config{Records: 20, PoolSize: 3, Seed: 42, BaseTime: base}
	a, err := NewPool(cfg, allSignals[:]...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewPool(cfg, allSignals[:]...)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 43
	c, err := NewPool(cfg, allSignals[:]...)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range signal.All() {
		for i := range 3 {
			if !bytes.Equal(a.Payloads(sig)[i].Body, b.Payloads(sig)[i].Body) {
				t.Errorf("%s payload %d differs with the same seed", sig, i)
			}
			if bytes.Equal(a.Payloads(sig)[i].Body, c.Payloads(sig)[i].Body) {
				t.Errorf("%s payload %d identical with another seed", sig, i)
			}
		}
	}
}

func TestShape(t *testing.T) {
	cfg := Config{Records: 50, Attrs: 6, AttrCardinality: 3, BodyBytes: 300, Services: 2, Instances: 3, PoolSize: 8, BaseTime: base}
	p, err := NewPool(cfg, signal.Logs)
	if err != nil {
		t.Fatal(err)
	}
	services, instances := map[string]bool{}, map[string]bool{}
	values := map[string]bool{}
	var lengths []int
	for _, pl := range p.Payloads(signal.Logs) {
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(pl.Body); err != nil {
			t.Fatal(err)
		}
		rl := req.Logs().ResourceLogs().At(0)
		name, _ := rl.Resource().Attributes().Get("service.name")
		services[name.Str()] = true
		inst, _ := rl.Resource().Attributes().Get("service.instance.id")
		instances[inst.Str()] = true
		for _, k := range []string{"host.name", "k8s.pod.name", "k8s.namespace.name"} {
			if _, ok := rl.Resource().Attributes().Get(k); !ok {
				t.Errorf("resource lacks %s", k)
			}
		}
		recs := rl.ScopeLogs().At(0).LogRecords()
		for i := range recs.Len() {
			r := recs.At(i)
			if r.Attributes().Len() != cfg.Attrs {
				t.Fatalf("record has %d attributes, want %d", r.Attributes().Len(), cfg.Attrs)
			}
			lengths = append(lengths, len(r.Body().Str()))
			r.Attributes().Range(func(_ string, v pcommon.Value) bool {
				values[v.Str()] = true
				return true
			})
		}
	}
	if len(services) > cfg.Services || len(services) == 0 {
		t.Errorf("got %d services, want 1..%d", len(services), cfg.Services)
	}
	if len(instances) > cfg.Services*cfg.Instances || len(instances) <= len(services) {
		t.Errorf("got %d instances of %d services, want more than one per service and at most %d", len(instances), len(services), cfg.Services*cfg.Instances)
	}
	// Log-normal lengths around BodyBytes: a median near it, a spread both ways.
	slices.Sort(lengths)
	if med := lengths[len(lengths)/2]; med < cfg.BodyBytes*2/3 || med > cfg.BodyBytes*3/2 {
		t.Errorf("median body %d bytes, want near %d", med, cfg.BodyBytes)
	}
	if lo, hi := lengths[len(lengths)/20], lengths[len(lengths)*19/20]; hi < 2*lo {
		t.Errorf("body lengths 5th..95th percentile %d..%d, want a spread of at least 2x", lo, hi)
	}
	if len(values) > cfg.AttrCardinality {
		t.Errorf("got %d distinct attribute values, want at most %d", len(values), cfg.AttrCardinality)
	}
}

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"zero is defaults", Config{}, nil},
		{"negative records", Config{Records: -1}, ErrInvalidConfig},
		{"too many records", Config{Records: MaxRecords + 1}, ErrInvalidConfig},
		{"bad encoding", Config{Encoding: "xml"}, ErrInvalidConfig},
		{"bad compression", Config{Compression: "br"}, ErrInvalidConfig},
		{"negative attrs", Config{Attrs: -2}, ErrInvalidConfig},
	})
}

// allSignals is signal.All in an addressable array, to pass as NewPool's variadic signals.
var allSignals = signal.All()
