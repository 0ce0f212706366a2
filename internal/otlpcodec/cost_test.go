package otlpcodec_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

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
			proto := encode(t, req, otlpcodec.EncodingProto)
			_, pdataErr := otlpcodec.DecodePdata(signal.Logs, otlpcodec.EncodingProto, bytes.Clone(proto))
			if pdataErr == nil {
				accepted++
			}
			for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
				_, err := otlpcodec.Decode(signal.Logs, enc, encode(t, req, enc), nil)
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
	valid := encode(t, otlptest.Logs(0, 3), otlpcodec.EncodingProto)
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

func TestJSONObjects(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{``, 0},
		{`{}`, 1},
		{`{"a":{"b":[{},{}]}}`, 4},
		{`{"a":"{{{"}`, 1},
		{`{"a":"\"{"}`, 1},
		{`{"a":"\\"}{`, 2},
		{`"unterminated {`, 0},
		{`{"a":"x\`, 1},
	} {
		if got := otlpcodec.JSONObjects([]byte(tc.in)); got != tc.want {
			t.Errorf("jsonObjects(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
