package otlpcodec

import (
	"fmt"
	"sync"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// emptyResponses caches the body of a full success per signal and encoding:
// the hot path answers without allocating. Protobuf is empty (all fields
// default); JSON is "{}".
var emptyResponses = sync.OnceValue(func() map[[2]uint8][]byte {
	m := make(map[[2]uint8][]byte)
	for _, s := range signal.All() {
		for _, e := range []Encoding{EncodingProto, EncodingJSON} {
			b, err := Response(s, e, 0, "")
			if err != nil {
				panic(fmt.Sprintf("encode empty response: %v", err)) // unreachable: fixed input
			}
			m[[2]uint8{uint8(s), uint8(e)}] = b
		}
	}
	return m
})

// SuccessResponse returns the cached Export*ServiceResponse body of a full
// success. Callers must not modify it.
func SuccessResponse(sig signal.Signal, enc Encoding) []byte {
	return emptyResponses()[[2]uint8{uint8(sig), uint8(enc)}]
}

// Response encodes the Export*ServiceResponse of sig in enc, with
// partial_success set when rejected > 0 or msg != "".
func Response(sig signal.Signal, enc Encoding, rejected int64, msg string) ([]byte, error) {
	type codec interface {
		MarshalProto() ([]byte, error)
		MarshalJSON() ([]byte, error)
	}
	var resp codec
	switch sig {
	case signal.Logs:
		r := plogotlp.NewExportResponse()
		if rejected > 0 || msg != "" {
			r.PartialSuccess().SetRejectedLogRecords(rejected)
			r.PartialSuccess().SetErrorMessage(msg)
		}
		resp = r
	case signal.Metrics:
		r := pmetricotlp.NewExportResponse()
		if rejected > 0 || msg != "" {
			r.PartialSuccess().SetRejectedDataPoints(rejected)
			r.PartialSuccess().SetErrorMessage(msg)
		}
		resp = r
	case signal.Traces:
		r := ptraceotlp.NewExportResponse()
		if rejected > 0 || msg != "" {
			r.PartialSuccess().SetRejectedSpans(rejected)
			r.PartialSuccess().SetErrorMessage(msg)
		}
		resp = r
	default:
		return nil, fmt.Errorf("encode response: unknown signal %v", sig)
	}
	if enc == EncodingJSON {
		return resp.MarshalJSON()
	}
	return resp.MarshalProto()
}

// Status encodes a google.rpc.Status with the gRPC code and message, in enc:
// the body OTLP/HTTP prescribes for 4xx and 5xx answers.
func Status(enc Encoding, code int32, msg string) []byte {
	st := &spb.Status{Code: code, Message: msg}
	var (
		b   []byte
		err error
	)
	if enc == EncodingJSON {
		b, err = protojson.Marshal(st)
	} else {
		b, err = proto.Marshal(st)
	}
	if err != nil { // unreachable for a two-field message; keep the answer well-formed
		return nil
	}
	return b
}

// ParseStatus decodes a google.rpc.Status body (clients and tests use it).
func ParseStatus(enc Encoding, body []byte) (code int32, msg string, err error) {
	st := &spb.Status{}
	if enc == EncodingJSON {
		err = protojson.Unmarshal(body, st)
	} else {
		err = proto.Unmarshal(body, st)
	}
	if err != nil {
		return 0, "", fmt.Errorf("decode status: %w", err)
	}
	return st.GetCode(), st.GetMessage(), nil
}
