package otlpcodec_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestDecodeDepthSameInBothEncodings: around the recursion limit, JSON
// and protobuf bodies are accepted or refused alike, exactly as pdata's
// protobuf decoder (what the projector reads) takes them, and the refusal
// wraps ErrTooDeep and ErrCorrupt and names the limit.
func TestDecodeDepthSameInBothEncodings(t *testing.T) {
	for _, kvlist := range []bool{false, true} {
		accepted := 0
		for levels := 25; levels <= 55; levels++ {
			req := otlptest.NestedLogs(levels, kvlist)
			proto := otlptest.Encode(t, req, otlpcodec.EncodingProto)
			_, pdataErr := otlpcodec.DecodePdata(signal.Logs, otlpcodec.EncodingProto, bytes.Clone(proto))
			if pdataErr == nil {
				accepted++
			}
			for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
				_, err := otlpcodec.Decode(signal.Logs, enc, otlptest.Encode(t, req, enc), nil)
				if (err == nil) != (pdataErr == nil) {
					t.Fatalf("kvlist %v, %d levels, %v: Decode error %v, pdata protobuf error %v", kvlist, levels, enc, err, pdataErr)
				}
				if err == nil {
					continue
				}
				if !errors.Is(err, otlpcodec.ErrTooDeep) || !errors.Is(err, otlpcodec.ErrCorrupt) {
					t.Errorf("%v: got %v, want ErrTooDeep and ErrCorrupt", enc, err)
				}
				if !strings.Contains(err.Error(), strconv.Itoa(otlpwire.RecursionLimit)) {
					t.Errorf("%v: message %q does not name the limit %d", enc, err, otlpwire.RecursionLimit)
				}
			}
		}
		if accepted == 0 || accepted == 31 {
			t.Fatalf("kvlist %v: pdata accepted %d of 31 depths: the limit is not inside the range tested", kvlist, accepted)
		}
	}
}

// TestDecodeCharge: Decode charges DecodeCost before a pdata decode (JSON
// by its objects, protobuf by its messages), nothing on the protobuf fast
// path, and returns the charge's error as is.
func TestDecodeCharge(t *testing.T) {
	valid := otlptest.Encode(t, otlptest.Logs(0, 3), otlpcodec.EncodingProto)
	long := []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"` + strings.Repeat("x{", 5000) + `"}}]}]}]}`)
	errSpent := errors.New("spent")
	for _, tc := range []struct {
		name string
		sig  signal.Signal
		enc  otlpcodec.Encoding
		body []byte
		want int64 // 0: not charged
	}{
		{"protobuf fast path", signal.Logs, otlpcodec.EncodingProto, valid, 0},
		{"1000 empty spans, protobuf", signal.Traces, otlpcodec.EncodingProto, otlptest.EmptyRecords(1000),
			otlpcodec.MessageDecodeBytes * (1000 + 3)},
		{"1000 empty spans, JSON", signal.Traces, otlpcodec.EncodingJSON,
			[]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{}` + strings.Repeat(`,{}`, 999) + `]}]}]}`),
			otlpcodec.MessageDecodeBytes * (1000 + 3)},
		{"long strings, JSON", signal.Logs, otlpcodec.EncodingJSON, long, otlpcodec.DecodeFactor * int64(len(long))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got int64
			_, err := otlpcodec.Decode(tc.sig, tc.enc, tc.body, func(n int64) error { got += n; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("charged %d, want %d", got, tc.want)
			}
			if tc.want == 0 {
				return
			}
			if _, err := otlpcodec.Decode(tc.sig, tc.enc, tc.body, func(int64) error { return errSpent }); err != errSpent {
				t.Errorf("with a refusing charge: got %v, want the charge's error as is", err)
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	for _, tc := range []struct {
		in             string
		objects, depth int
	}{
		{``, 0, 0},
		{`{}`, 1, 1},
		{`{"a":{"b":[{},{}]}}`, 4, 4},
		{`{"a":"{{{"}`, 1, 1},
		{`{"a":"\"{"}`, 1, 1},
		{`{"a":"\\"}{`, 2, 1},
		{`"unterminated {`, 0, 0},
		{`{"a":"x\`, 1, 1},
		{`[[[[]]]]`, 0, 4},
	} {
		if objects, depth := otlpcodec.JSONShape([]byte(tc.in)); objects != tc.objects || depth != tc.depth {
			t.Errorf("jsonShape(%s) = %d objects, depth %d; want %d, %d", tc.in, objects, depth, tc.objects, tc.depth)
		}
	}
}

// TestDecodeJSONTooDeepBeforeDecoding: JSON nested far past any valid OTLP
// value is refused from its brackets alone, before pdata (whose JSON
// decoder recurses per bracket without a limit) and before any charge.
func TestDecodeJSONTooDeepBeforeDecoding(t *testing.T) {
	const levels = 100_000
	js := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":` + strings.Repeat(`{"arrayValue":{"values":[`, levels) +
		`{"stringValue":"x"}` + strings.Repeat(`]}}`, levels) + `}]}]}]}`
	charged := false
	_, err := otlpcodec.Decode(signal.Logs, otlpcodec.EncodingJSON, []byte(js), func(int64) error { charged = true; return nil })
	if !errors.Is(err, otlpcodec.ErrTooDeep) || !errors.Is(err, otlpcodec.ErrCorrupt) || charged {
		t.Fatalf("got %v (charged %v), want ErrTooDeep and ErrCorrupt before any charge", err, charged)
	}
	// The deepest valid place: an exemplar's attribute of a histogram data point, nested to the limit.
	req := pmetricotlp.NewExportRequest()
	m := req.Metrics().ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("h")
	v := m.SetEmptyHistogram().DataPoints().AppendEmpty().Exemplars().AppendEmpty().FilteredAttributes().PutEmpty("k")
	for range (otlpwire.RecursionLimit - 2) / 2 {
		v = v.SetEmptySlice().AppendEmpty()
	}
	v.SetStr("leaf")
	body := otlptest.Encode(t, req, otlpcodec.EncodingJSON)
	if _, depth := otlpcodec.JSONShape(body); depth > otlpcodec.MaxJSONDepth {
		t.Errorf("valid body nests %d brackets, over the bound %d", depth, otlpcodec.MaxJSONDepth)
	}
	if _, err := otlpcodec.Decode(signal.Metrics, otlpcodec.EncodingJSON, body, nil); err != nil {
		t.Errorf("exemplar attribute nested to the limit: %v", err)
	}
}
