package otlpcodec

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// Request is a decoded and validated Export*ServiceRequest.
type Request struct {
	// Payload is the protobuf encoding of the request holding only the
	// accepted records. When the body was protobuf and nothing was rejected
	// it is the body itself (no copy, no re-encoding).
	Payload []byte
	// Records counts accepted records: log records, metric data points, or
	// spans.
	Records int
	// Rejected counts rejected records (partial_success.rejected_*).
	Rejected int64
	// Message explains the rejections ("" when there are none); it becomes
	// partial_success.error_message.
	Message string
}

// Decode decodes body (encoded with enc) as the Export*ServiceRequest of sig,
// validates it record by record (see the package doc for the rule) and
// returns the accepted part in protobuf encoding. An undecodable body fails
// with an error wrapping ErrCorrupt; a value nested too deep (in either
// encoding) with one wrapping ErrTooDeep and ErrCorrupt.
//
// charge, if not nil, is called once with DecodeCost before a body is
// decoded with pdata (protobuf bodies the scan proves valid are not): an
// error from it is returned as is, before anything is allocated.
func Decode(sig signal.Signal, enc Encoding, body []byte, charge func(int64) error) (Request, error) {
	var messages int
	if enc == EncodingProto {
		res := scanProto(sig, body)
		switch {
		case res.ok:
			return Request{Payload: body, Records: res.records}, nil
		case errors.Is(res.err, errTooDeep):
			return Request{}, tooDeep()
		}
		messages = res.messages
	} else {
		var depth int
		if messages, depth = jsonShape(body); depth > maxJSONDepth {
			return Request{}, tooDeepJSON(depth)
		}
	}
	if charge != nil {
		if err := charge(DecodeCost(len(body), messages)); err != nil {
			return Request{}, err
		}
	}
	req, err := decodePdata(sig, enc, body)
	if err == nil && enc == EncodingJSON {
		err = checkDepth(sig, req.Payload)
	}
	if err != nil {
		return Request{}, err
	}
	return req, nil
}

// decodePdata is Decode through pdata: every JSON body, and every protobuf
// body the scan could not prove valid and whole.
func decodePdata(sig signal.Signal, enc Encoding, body []byte) (Request, error) {
	switch sig {
	case signal.Logs:
		return decodeLogs(enc, body)
	case signal.Metrics:
		return decodeMetrics(enc, body)
	case signal.Traces:
		return decodeTraces(enc, body)
	}
	return Request{}, fmt.Errorf("decode: unknown signal %v", sig)
}

func unmarshal(enc Encoding, body []byte, proto, json func([]byte) error) error {
	var err error
	if enc == EncodingJSON {
		err = json(body)
	} else {
		err = proto(body)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, enc, err)
	}
	return nil
}

// payload returns the protobuf to store: the body itself when it already is
// exactly that, else a fresh encoding of req.
func payload(enc Encoding, body []byte, rejected bool, marshal func() ([]byte, error)) ([]byte, error) {
	if enc == EncodingProto && !rejected {
		return body, nil
	}
	b, err := marshal()
	if err != nil {
		return nil, fmt.Errorf("marshal protobuf: %w", err)
	}
	return b, nil
}

func decodeLogs(enc Encoding, body []byte) (Request, error) {
	req := plogotlp.NewExportRequest()
	if err := unmarshal(enc, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
		return Request{}, err
	}
	n := req.Logs().LogRecordCount()
	p, err := payload(enc, body, false, req.MarshalProto)
	return Request{Payload: p, Records: n}, err
}

func decodeTraces(enc Encoding, body []byte) (Request, error) {
	req := ptraceotlp.NewExportRequest()
	if err := unmarshal(enc, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
		return Request{}, err
	}
	td := req.Traces()
	n, bad := 0, 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if validSpan(spans.At(k)) {
					n++
				} else {
					bad++
				}
			}
		}
	}
	out := Request{Records: n}
	if bad > 0 {
		rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !validSpan(s) })
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
		out.Rejected = int64(bad)
		out.Message = fmt.Sprintf("%d spans rejected: trace_id and span_id must not be all zeroes", bad)
	}
	p, err := payload(enc, body, bad > 0, req.MarshalProto)
	out.Payload = p
	return out, err
}

func validSpan(s ptrace.Span) bool {
	return !s.TraceID().IsEmpty() && !s.SpanID().IsEmpty()
}

func decodeMetrics(enc Encoding, body []byte) (Request, error) {
	req := pmetricotlp.NewExportRequest()
	if err := unmarshal(enc, body, req.UnmarshalProto, req.UnmarshalJSON); err != nil {
		return Request{}, err
	}
	md := req.Metrics()
	points, badPoints, badMetrics := 0, 0, 0
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if validMetric(m) {
					points += dataPoints(m)
				} else {
					badMetrics++
					badPoints += dataPoints(m)
				}
			}
		}
	}
	out := Request{Records: points}
	if badMetrics > 0 {
		rms.RemoveIf(func(rm pmetric.ResourceMetrics) bool {
			rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool {
				sm.Metrics().RemoveIf(func(m pmetric.Metric) bool { return !validMetric(m) })
				return sm.Metrics().Len() == 0
			})
			return rm.ScopeMetrics().Len() == 0
		})
		out.Rejected = int64(badPoints)
		out.Message = fmt.Sprintf("%d metrics (%d data points) rejected: a metric needs a name and data", badMetrics, badPoints)
	}
	p, err := payload(enc, body, badMetrics > 0, req.MarshalProto)
	out.Payload = p
	return out, err
}

func validMetric(m pmetric.Metric) bool {
	return m.Name() != "" && m.Type() != pmetric.MetricTypeEmpty
}

// dataPoints counts the data points of m, whatever its type.
func dataPoints(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}
