package otlptest

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/signal"
)

// Message is an OTLP export request or response that marshals to both OTLP/HTTP encodings.
type Message interface {
	MarshalProto() ([]byte, error)
	MarshalJSON() ([]byte, error)
}

// Encode marshals m in enc, failing t if it cannot. It calls t.Fatal: call it on the test's
// goroutine.
func Encode(t testing.TB, m Message, enc otlpcodec.Encoding) []byte {
	t.Helper()
	var (
		b   []byte
		err error
	)
	if enc == otlpcodec.EncodingJSON {
		b, err = m.MarshalJSON()
	} else {
		b, err = m.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PartialSuccess decodes b, an Export*ServiceResponse of sig in enc, and returns its
// partial_success fields, failing t if b does not decode.
func PartialSuccess(t testing.TB, sig signal.Signal, enc otlpcodec.Encoding, b []byte) (rejected int64, msg string) {
	t.Helper()
	un := func(proto, json func([]byte) error) {
		var err error
		if enc == otlpcodec.EncodingJSON {
			err = json(b)
		} else {
			err = proto(b)
		}
		if err != nil {
			t.Fatalf("decode %v response %.200q: %v", sig, b, err)
		}
	}
	switch sig {
	case signal.Logs:
		r := plogotlp.NewExportResponse()
		un(r.UnmarshalProto, r.UnmarshalJSON)
		return r.PartialSuccess().RejectedLogRecords(), r.PartialSuccess().ErrorMessage()
	case signal.Metrics:
		r := pmetricotlp.NewExportResponse()
		un(r.UnmarshalProto, r.UnmarshalJSON)
		return r.PartialSuccess().RejectedDataPoints(), r.PartialSuccess().ErrorMessage()
	default:
		r := ptraceotlp.NewExportResponse()
		un(r.UnmarshalProto, r.UnmarshalJSON)
		return r.PartialSuccess().RejectedSpans(), r.PartialSuccess().ErrorMessage()
	}
}
