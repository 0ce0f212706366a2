package otlpcodec_test

import (
	"bytes"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// checkScan holds the protobuf scan to pdata's answer for body: when the
// scan accepts, pdata accepts the same records and rejects none. It
// returns whether the scan accepted.
func checkScan(t testing.TB, sig signal.Signal, body []byte) bool {
	t.Helper()
	n, ok := otlpcodec.ScanProto(sig, bytes.Clone(body))
	if !ok {
		return false
	}
	want, err := otlpcodec.DecodePdata(sig, otlpcodec.EncodingProto, bytes.Clone(body))
	if err != nil {
		t.Fatalf("%v: scan accepted %d records of a body pdata rejects: %v (body %x)", sig, n, err, body)
	}
	if want.Rejected != 0 || want.Records != n {
		t.Fatalf("%v: scan counted %d records, pdata %d with %d rejected (body %x)", sig, n, want.Records, want.Rejected, body)
	}
	return true
}

// TestScanTakesGeneratedPayloads: everything the load generator sends, in
// every shape it has, takes the fast path with pdata's record count.
func TestScanTakesGeneratedPayloads(t *testing.T) {
	for _, records := range []int{1, 10, 100} {
		for _, attrs := range []int{0, 3} {
			pool, err := otlpgen.NewPool(otlpgen.Config{Records: records, Attrs: attrs, PoolSize: 8, Seed: uint64(records*10 + attrs)},
				signal.Logs, signal.Metrics, signal.Traces)
			if err != nil {
				t.Fatal(err)
			}
			for _, sig := range []signal.Signal{signal.Logs, signal.Metrics, signal.Traces} {
				for i, p := range pool.Payloads(sig) {
					if !checkScan(t, sig, p.Body) {
						t.Errorf("%v records=%d attrs=%d payload %d: scan refused a valid request", sig, records, attrs, i)
					}
				}
			}
		}
	}
}

// TestScanCases walks the rules one by one: each body is checked against
// pdata, and the table says whether the fast path must take it.
func TestScanCases(t *testing.T) {
	logs := otlptest.Encode(t, otlptest.Logs(0, 3), otlpcodec.EncodingProto)
	everyMetric := otlptest.Encode(t, otlptest.Metrics(0, 10, 0), otlpcodec.EncodingProto)
	badMetrics := otlptest.Encode(t, otlptest.Metrics(0, 10, 2), otlpcodec.EncodingProto)
	spans := otlptest.Encode(t, otlptest.Traces(0, 4, 0), otlpcodec.EncodingProto)
	badSpans := otlptest.Encode(t, otlptest.Traces(0, 4, 1), otlpcodec.EncodingProto)

	// A log record whose body nests arrays 99 and 100 deep: pdata's limit.
	nested := func(depth int) []byte {
		req := plogotlp.NewExportRequest()
		lr := req.Logs().ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		v := lr.Body()
		for range depth {
			v = v.SetEmptySlice().AppendEmpty()
		}
		v.SetStr("leaf")
		return otlptest.Encode(t, req, otlpcodec.EncodingProto)
	}
	// Exemplars, exponential buckets and histogram bounds: the packed fields.
	rich := func() []byte {
		req := otlptest.Metrics(1, 5, 0)
		rms := req.Metrics().ResourceMetrics()
		for i := range rms.Len() {
			ms := rms.At(i).ScopeMetrics().At(0).Metrics()
			for j := range ms.Len() {
				m := ms.At(j)
				switch m.Type() {
				case pmetric.MetricTypeHistogram:
					dp := m.Histogram().DataPoints().At(0)
					dp.ExplicitBounds().FromRaw([]float64{1, 2, 3})
					dp.BucketCounts().FromRaw([]uint64{1, 2, 3, 4})
					ex := dp.Exemplars().AppendEmpty()
					ex.SetTraceID(otlptest.TraceID(9))
					ex.SetSpanID(otlptest.SpanID(9))
					ex.SetDoubleValue(1.5)
				case pmetric.MetricTypeExponentialHistogram:
					dp := m.ExponentialHistogram().DataPoints().At(0)
					dp.Positive().BucketCounts().FromRaw([]uint64{1, 300, 70000})
					dp.Negative().SetOffset(-3)
				}
			}
		}
		return otlptest.Encode(t, req, otlpcodec.EncodingProto)
	}()
	// A span with an event, a link and a status.
	detailed := func() []byte {
		req := otlptest.Traces(3, 1, 0)
		s := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		s.Events().AppendEmpty().SetName("retry")
		l := s.Links().AppendEmpty()
		l.SetTraceID(otlptest.TraceID(7))
		l.SetSpanID(otlptest.SpanID(7))
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Attributes().PutEmptyMap("m").PutEmptySlice("s").AppendEmpty().SetEmptyBytes().FromRaw([]byte{1, 2})
		return otlptest.Encode(t, req, otlpcodec.EncodingProto)
	}()
	// Field 1000, the deprecated instrumentation_library_logs: pdata migrates it.
	deprecated := protowire.AppendTag(nil, 1, protowire.BytesType)
	rl := protowire.AppendTag(nil, 1000, protowire.BytesType)
	rl = protowire.AppendBytes(rl, protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), nil))
	deprecated = protowire.AppendBytes(deprecated, rl)
	// Unknown fields of every wire type before the records, a group among
	// them (pdata refuses a group that ends the buffer: "unexpected EOF").
	unknown := protowire.AppendTag(nil, 79, protowire.StartGroupType)
	unknown = protowire.AppendTag(unknown, 79, protowire.EndGroupType)
	unknown = protowire.AppendTag(unknown, 77, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 5)
	unknown = protowire.AppendTag(unknown, 78, protowire.Fixed32Type)
	unknown = append(unknown, 1, 2, 3, 4)
	unknown = protowire.AppendTag(unknown, 80, protowire.Fixed64Type)
	unknown = append(unknown, 1, 2, 3, 4, 5, 6, 7, 8)
	unknown = append(unknown, logs...)
	groupAtEnd := protowire.AppendTag(bytes.Clone(logs), 79, protowire.StartGroupType)
	groupAtEnd = protowire.AppendTag(groupAtEnd, 79, protowire.EndGroupType)
	// A known field with the wrong wire type: resource_logs as a varint.
	wrongType := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	// A trace id of 15 bytes inside an otherwise valid span.
	shortID := func() []byte {
		span := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), make([]byte, 15))
		scope := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), span)
		res := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), scope)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res)
	}()
	// Packed bucket counts of 12 bytes: not a whole number of fixed64s.
	ragged := func() []byte {
		dp := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), make([]byte, 12))
		h := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), dp)
		m := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("h"))
		m = protowire.AppendBytes(protowire.AppendTag(m, 9, protowire.BytesType), h)
		sm := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), m)
		rm := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), sm)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rm)
	}()

	for _, tc := range []struct {
		name string
		sig  signal.Signal
		body []byte
		fast bool
	}{
		{"empty request", signal.Logs, nil, true},
		{"logs", signal.Logs, logs, true},
		{"five metric types", signal.Metrics, everyMetric, true},
		{"packed fields and exemplars", signal.Metrics, rich, true},
		{"spans", signal.Traces, spans, true},
		{"events links status bytes", signal.Traces, detailed, true},
		{"unknown fields", signal.Logs, unknown, true},
		{"unknown group ending the body", signal.Logs, groupAtEnd, false},
		{"AnyValue 99 deep", signal.Logs, nested(48), true},
		{"AnyValue past the limit", signal.Logs, nested(60), false},
		{"rejected metrics go to pdata", signal.Metrics, badMetrics, false},
		{"rejected spans go to pdata", signal.Traces, badSpans, false},
		{"deprecated scope list goes to pdata", signal.Logs, deprecated, false},
		{"wrong wire type", signal.Logs, wrongType, false},
		{"15-byte trace id", signal.Traces, shortID, false},
		{"ragged packed fixed64", signal.Metrics, ragged, false},
		{"truncated", signal.Logs, logs[:len(logs)-1], false},
		{"garbage", signal.Metrics, []byte("\xff\xff\xff"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkScan(t, tc.sig, tc.body); got != tc.fast {
				t.Errorf("fast path taken: %v, want %v", got, tc.fast)
			}
			// Whatever path it takes, Decode agrees with pdata.
			got, gotErr := otlpcodec.Decode(tc.sig, otlpcodec.EncodingProto, bytes.Clone(tc.body), nil)
			want, wantErr := otlpcodec.DecodePdata(tc.sig, otlpcodec.EncodingProto, bytes.Clone(tc.body))
			if (gotErr == nil) != (wantErr == nil) || got.Records != want.Records || got.Rejected != want.Rejected {
				t.Errorf("Decode = %d records, %d rejected, %v; pdata %d, %d, %v",
					got.Records, got.Rejected, gotErr, want.Records, want.Rejected, wantErr)
			}
		})
	}
}

// TestScanDepthBoundary: around pdata's recursion limit the scan takes
// exactly the bodies pdata takes.
func TestScanDepthBoundary(t *testing.T) {
	accepted := 0
	for depth := 14; depth <= 26; depth++ { // 5 nesting levels each: around 100
		req := plogotlp.NewExportRequest()
		v := req.Logs().ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body()
		for range depth {
			v = v.SetEmptyMap().PutEmptySlice("k").AppendEmpty()
		}
		body := otlptest.Encode(t, req, otlpcodec.EncodingProto)
		_, pdataErr := otlpcodec.DecodePdata(signal.Logs, otlpcodec.EncodingProto, bytes.Clone(body))
		if fast := checkScan(t, signal.Logs, body); fast != (pdataErr == nil) {
			t.Errorf("depth %d: scan took it %v, pdata error %v", depth, fast, pdataErr)
		}
		if pdataErr == nil {
			accepted++
		}
	}
	if accepted == 0 || accepted == 13 {
		t.Fatalf("pdata accepted %d of 13 depths: the limit is not inside the range tested", accepted)
	}
}

// FuzzScanMatchesPdata: on any input, a body the scan accepts is one pdata
// accepts with the same records and nothing rejected.
func FuzzScanMatchesPdata(f *testing.F) {
	for _, sig := range []signal.Signal{signal.Logs, signal.Metrics, signal.Traces} {
		for _, s := range seeds(f, sig, otlpcodec.EncodingProto) {
			f.Add(uint8(sig), s)
		}
	}
	f.Fuzz(func(t *testing.T, sigByte uint8, body []byte) {
		sig := signal.Signal(sigByte%3 + 1)
		checkScan(t, sig, body)
	})
}

// BenchmarkScanVsPdata: the protobuf fast path beside the pdata decode it
// replaces on the ingest path.
func BenchmarkScanVsPdata(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		pool, err := otlpgen.NewPool(otlpgen.Config{Records: n, PoolSize: 1, Seed: 1}, signal.Logs, signal.Metrics, signal.Traces)
		if err != nil {
			b.Fatal(err)
		}
		for _, sig := range []signal.Signal{signal.Logs, signal.Metrics, signal.Traces} {
			body := pool.Payloads(sig)[0].Body
			for _, path := range []struct {
				name string
				fn   func() error
			}{
				{"scan", func() error {
					if _, ok := otlpcodec.ScanProto(sig, body); !ok {
						return fmt.Errorf("refused")
					}
					return nil
				}},
				{"pdata", func() error { _, err := otlpcodec.DecodePdata(sig, otlpcodec.EncodingProto, body); return err }},
			} {
				b.Run(fmt.Sprintf("%v/%d/%s", sig, n, path.name), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						if err := path.fn(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
