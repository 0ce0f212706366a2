package otlpcodec_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/signal"
)

// parseResponse decodes an Export*ServiceResponse and returns its
// partial_success fields.
func parseResponse(t testing.TB, sig signal.Signal, enc otlpcodec.Encoding, b []byte) (int64, string) {
	t.Helper()
	un := func(proto, json func([]byte) error) {
		var err error
		if enc == otlpcodec.EncodingJSON {
			err = json(b)
		} else {
			err = proto(b)
		}
		if err != nil {
			t.Fatalf("decode %v response %q: %v", sig, b, err)
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
