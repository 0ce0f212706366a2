package otlpcodec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/signal"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name     string
		sig      signal.Signal
		req      otlptest.Message
		valid    otlptest.Message // the request holding only the accepted records
		records  int
		rejected int64
	}{
		{"logs", signal.Logs, otlptest.Logs(0, 7), otlptest.Logs(0, 7), 7, 0},
		{"metrics all five types", signal.Metrics, otlptest.Metrics(0, 10, 0), otlptest.Metrics(0, 10, 0), 10, 0},
		{"metrics rejected", signal.Metrics, otlptest.Metrics(0, 10, 4), otlptest.Metrics(0, 10, 0), 10, 2},
		{"traces", signal.Traces, otlptest.Traces(0, 5, 0), otlptest.Traces(0, 5, 0), 5, 0},
		{"traces rejected", signal.Traces, otlptest.Traces(0, 5, 3), otlptest.Traces(0, 5, 0), 5, 3},
		{"traces all rejected", signal.Traces, otlptest.Traces(0, 0, 2), otlptest.Traces(0, 0, 0), 0, 2},
	}
	for _, tt := range tests {
		for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
			t.Run(tt.name+"/"+enc.String(), func(t *testing.T) {
				got, err := otlpcodec.Decode(tt.sig, enc, otlptest.Encode(t, tt.req, enc), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got.Records != tt.records || got.Rejected != tt.rejected {
					t.Errorf("got %d records, %d rejected; want %d, %d", got.Records, got.Rejected, tt.records, tt.rejected)
				}
				if (got.Message != "") != (tt.rejected > 0) {
					t.Errorf("message %q with %d rejected", got.Message, tt.rejected)
				}
				want := otlptest.Encode(t, tt.valid, otlpcodec.EncodingProto)
				if tt.records == 0 {
					want = nil // no resource left: the empty message
				}
				if string(got.Payload) != string(want) {
					t.Errorf("payload is %d bytes, want the %d-byte protobuf of the accepted records", len(got.Payload), len(want))
				}
			})
		}
	}
}

func TestDecodeUndecodable(t *testing.T) {
	tests := []struct {
		name string
		sig  signal.Signal
		enc  otlpcodec.Encoding
		body string
	}{
		{"proto garbage", signal.Logs, otlpcodec.EncodingProto, "\xff\xff\xff\xff"},
		{"proto truncated", signal.Traces, otlpcodec.EncodingProto, string(truncate(t, otlptest.Traces(0, 3, 0)))},
		{"json garbage", signal.Metrics, otlpcodec.EncodingJSON, "{not json"},
		{"json wrong type", signal.Logs, otlpcodec.EncodingJSON, `{"resourceLogs": 3}`},
		{"json short trace id", signal.Traces, otlpcodec.EncodingJSON,
			`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"abcd","spanId":"0102030405060708"}]}]}]}`},
		{"proto 15-byte trace id", signal.Traces, otlpcodec.EncodingProto, shortTraceID()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := otlpcodec.Decode(tt.sig, tt.enc, []byte(tt.body), nil)
			if !errors.Is(err, otlpcodec.ErrCorrupt) {
				t.Errorf("error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func truncate(t *testing.T, m otlptest.Message) []byte {
	b := otlptest.Encode(t, m, otlpcodec.EncodingProto)
	return b[:len(b)-3]
}

// shortTraceID hand-builds resource_spans{scope_spans{spans{trace_id: 15 bytes}}}.
func shortTraceID() string {
	span := "\x0a\x0f" + strings.Repeat("\x01", 15)
	scope := "\x12" + string(rune(len(span))) + span
	rs := "\x12" + string(rune(len(scope))) + scope
	return "\x0a" + string(rune(len(rs))) + rs
}

func TestDecodeJSONUnknownFieldsIgnored(t *testing.T) {
	body := `{"resourceLogs":[{"futureField":{"a":[1,2]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"hi"},"severityNumber":9,"newThing":true}]}]}]}`
	got, err := otlpcodec.Decode(signal.Logs, otlpcodec.EncodingJSON, []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Records != 1 {
		t.Errorf("got %d records, want 1", got.Records)
	}
}

func TestResponse(t *testing.T) {
	for _, sig := range signal.All() {
		for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
			t.Run(fmt.Sprintf("%v/%v", sig, enc), func(t *testing.T) {
				b, err := otlpcodec.Response(sig, enc, 3, "3 rejected")
				if err != nil {
					t.Fatal(err)
				}
				rejected, msg := otlptest.PartialSuccess(t, sig, enc, b)
				if rejected != 3 || msg != "3 rejected" {
					t.Errorf("got rejected=%d message=%q, want 3 and %q", rejected, msg, "3 rejected")
				}
				rejected, msg = otlptest.PartialSuccess(t, sig, enc, otlpcodec.SuccessResponse(sig, enc))
				if rejected != 0 || msg != "" {
					t.Errorf("success response has rejected=%d message=%q", rejected, msg)
				}
			})
		}
	}
}

func TestStatus(t *testing.T) {
	for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
		b := otlpcodec.Status(enc, otlpcodec.CodeInvalidArgument, "bad body")
		code, msg, err := otlpcodec.ParseStatus(enc, b)
		if err != nil {
			t.Fatal(err)
		}
		if code != otlpcodec.CodeInvalidArgument || msg != "bad body" {
			t.Errorf("%v: got code=%d message=%q", enc, code, msg)
		}
	}
	if got := string(otlpcodec.Status(otlpcodec.EncodingJSON, 3, "x")); got != `{"code":3,"message":"x"}` &&
		got != `{"code":3, "message":"x"}` {
		t.Errorf("JSON status = %s", got)
	}
}
