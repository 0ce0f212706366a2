package otlpcodec

import (
	"errors"

	"github.com/otelbench/otelbench/internal/otlpwire"
	"github.com/otelbench/otelbench/internal/signal"
)

// The protobuf fast path.
//
// Decoding a protobuf request with pdata builds every record as Go objects
// only for the ingest path to count them and throw them away: the body
// itself is what is stored. scanProto walks the same bytes without
// allocating, with pdata's acceptance rules (v1.71, the generated
// UnmarshalProto code): the wire type of every known field of every message
// of the three Export*ServiceRequests is checked, ids must be 0 or 8/16
// bytes, packed fields must be whole, unknown fields are skipped with pdata's
// ConsumeUnknown, and the AnyValue family stops at its recursion limit.
//
// It only ever answers "pdata would accept this with these records and
// reject nothing". Everything else (a body it cannot prove valid, a
// rejected span or metric, the deprecated field-1000 scope lists pdata
// migrates) sends Decode down the pdata path, which owns every error
// message and every partial-success rewrite. FuzzScanMatchesPdata holds the
// two to the same answers.

// errScan is the scanner's usual error: the caller falls back to pdata,
// which says what is wrong. errTooDeep is the one the scanner answers
// itself: an AnyValue nested to otlpwire.RecursionLimit, which pdata's
// UnmarshalProto refuses too, whatever follows.
var (
	errScan    = errors.New("otlp scan: not provably valid")
	errTooDeep = errors.New("otlp scan: AnyValue nesting too deep")
)

type fieldKind uint8

const (
	fUnknown      fieldKind = iota
	fScalar                 // wire type must be f.wt
	fMsg                    // length-delimited message f.msg
	fID16                   // trace id: 0 or 16 bytes
	fID8                    // span id: 0 or 8 bytes
	fPackedI64              // repeated fixed64/double: packed (multiple of 8) or one I64
	fPackedVarint           // repeated varint: packed or one varint
)

// role marks the messages whose contents the scan counts or checks.
type role uint8

const (
	roleNone      role = iota
	roleResource       // Resource{Logs,Spans,Metrics}: field 1000 sends the request to pdata
	roleLogRecord      // counted
	roleSpan           // counted when trace_id and span_id are not all zeroes
	roleMetric         // its data points counted when named and with data
	roleData           // Gauge/Sum/Histogram/ExponentialHistogram/Summary: field 1 is a data point
)

type field struct {
	kind fieldKind
	wt   uint8
	msg  *schema
}

type schema struct {
	fields    []field // by field number
	anyFamily bool    // AnyValue, ArrayValue, KeyValue, KeyValueList share pdata's depth limit
	role      role
}

func (s *schema) field(num int32) field {
	if num >= 0 && int(num) < len(s.fields) {
		return s.fields[num]
	}
	return field{}
}

// Schemas, from pdata v1.71's generated_proto_*.go.
var (
	sAnyValue, sArrayValue, sKeyValue, sKeyValueList schema
	sEntityRef, sResource, sScope                    schema

	sLogsRequest, sResourceLogs, sScopeLogs, sLogRecord schema

	sTracesRequest, sResourceSpans, sScopeSpans, sSpan schema
	sSpanEvent, sSpanLink, sStatus                     schema

	sMetricsRequest, sResourceMetrics, sScopeMetrics, sMetric schema
	sGauge, sSum, sHistogram, sExpHistogram, sSummary         schema
	sNumberPoint, sHistogramPoint, sExpHistogramPoint         schema
	sBuckets, sSummaryPoint, sQuantile, sExemplar             schema
)

func scalar(wt uint8) field { return field{kind: fScalar, wt: wt} }
func msg(s *schema) field   { return field{kind: fMsg, msg: s} }

var (
	fString = scalar(otlpwire.Len)
	fVarint = scalar(otlpwire.Varint)
	fI64    = scalar(otlpwire.I64)
	fI32    = scalar(otlpwire.I32)
	fTrace  = field{kind: fID16}
	fSpanID = field{kind: fID8}
)

// fields builds a field table from number → field.
func fields(m map[int]field) []field {
	n := 0
	for k := range m {
		n = max(n, k+1)
	}
	out := make([]field, n)
	for k, f := range m {
		out[k] = f
	}
	return out
}

func init() {
	sAnyValue = schema{anyFamily: true, fields: fields(map[int]field{
		1: fString, 2: fVarint, 3: fVarint, 4: fI64,
		5: msg(&sArrayValue), 6: msg(&sKeyValueList), 7: fString, 8: fVarint,
	})}
	sArrayValue = schema{anyFamily: true, fields: fields(map[int]field{1: msg(&sAnyValue)})}
	sKeyValue = schema{anyFamily: true, fields: fields(map[int]field{1: fString, 2: msg(&sAnyValue), 3: fVarint})}
	sKeyValueList = schema{anyFamily: true, fields: fields(map[int]field{1: msg(&sKeyValue)})}
	sEntityRef = schema{fields: fields(map[int]field{1: fString, 2: fString, 3: fString, 4: fString})}
	sResource = schema{fields: fields(map[int]field{1: msg(&sKeyValue), 2: fVarint, 3: msg(&sEntityRef)})}
	sScope = schema{fields: fields(map[int]field{1: fString, 2: fString, 3: msg(&sKeyValue), 4: fVarint})}

	// Logs.
	sLogsRequest = schema{fields: fields(map[int]field{1: msg(&sResourceLogs)})}
	sResourceLogs = schema{role: roleResource, fields: fields(map[int]field{1: msg(&sResource), 2: msg(&sScopeLogs), 3: fString})}
	sScopeLogs = schema{fields: fields(map[int]field{1: msg(&sScope), 2: msg(&sLogRecord), 3: fString})}
	sLogRecord = schema{role: roleLogRecord, fields: fields(map[int]field{
		1: fI64, 2: fVarint, 3: fString, 5: msg(&sAnyValue), 6: msg(&sKeyValue), 7: fVarint,
		8: fI32, 9: fTrace, 10: fSpanID, 11: fI64, 12: fString,
	})}

	// Traces.
	sTracesRequest = schema{fields: fields(map[int]field{1: msg(&sResourceSpans)})}
	sResourceSpans = schema{role: roleResource, fields: fields(map[int]field{1: msg(&sResource), 2: msg(&sScopeSpans), 3: fString})}
	sScopeSpans = schema{fields: fields(map[int]field{1: msg(&sScope), 2: msg(&sSpan), 3: fString})}
	sSpan = schema{role: roleSpan, fields: fields(map[int]field{
		1: fTrace, 2: fSpanID, 3: fString, 4: fSpanID, 5: fString, 6: fVarint, 7: fI64, 8: fI64,
		9: msg(&sKeyValue), 10: fVarint, 11: msg(&sSpanEvent), 12: fVarint, 13: msg(&sSpanLink),
		14: fVarint, 15: msg(&sStatus), 16: fI32,
	})}
	sSpanEvent = schema{fields: fields(map[int]field{1: fI64, 2: fString, 3: msg(&sKeyValue), 4: fVarint})}
	sSpanLink = schema{fields: fields(map[int]field{
		1: fTrace, 2: fSpanID, 3: fString, 4: msg(&sKeyValue), 5: fVarint, 6: fI32,
	})}
	sStatus = schema{fields: fields(map[int]field{2: fString, 3: fVarint})}

	// Metrics.
	sMetricsRequest = schema{fields: fields(map[int]field{1: msg(&sResourceMetrics)})}
	sResourceMetrics = schema{role: roleResource, fields: fields(map[int]field{1: msg(&sResource), 2: msg(&sScopeMetrics), 3: fString})}
	sScopeMetrics = schema{fields: fields(map[int]field{1: msg(&sScope), 2: msg(&sMetric), 3: fString})}
	sMetric = schema{role: roleMetric, fields: fields(map[int]field{
		1: fString, 2: fString, 3: fString, 5: msg(&sGauge), 7: msg(&sSum), 9: msg(&sHistogram),
		10: msg(&sExpHistogram), 11: msg(&sSummary), 12: msg(&sKeyValue),
	})}
	sGauge = schema{role: roleData, fields: fields(map[int]field{1: msg(&sNumberPoint)})}
	sSum = schema{role: roleData, fields: fields(map[int]field{1: msg(&sNumberPoint), 2: fVarint, 3: fVarint})}
	sHistogram = schema{role: roleData, fields: fields(map[int]field{1: msg(&sHistogramPoint), 2: fVarint})}
	sExpHistogram = schema{role: roleData, fields: fields(map[int]field{1: msg(&sExpHistogramPoint), 2: fVarint})}
	sSummary = schema{role: roleData, fields: fields(map[int]field{1: msg(&sSummaryPoint)})}
	sNumberPoint = schema{fields: fields(map[int]field{
		2: fI64, 3: fI64, 4: fI64, 5: msg(&sExemplar), 6: fI64, 7: msg(&sKeyValue), 8: fVarint,
	})}
	sHistogramPoint = schema{fields: fields(map[int]field{
		2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: {kind: fPackedI64}, 7: {kind: fPackedI64},
		8: msg(&sExemplar), 9: msg(&sKeyValue), 10: fVarint, 11: fI64, 12: fI64,
	})}
	sExpHistogramPoint = schema{fields: fields(map[int]field{
		1: msg(&sKeyValue), 2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: fVarint, 7: fI64,
		8: msg(&sBuckets), 9: msg(&sBuckets), 10: fVarint, 11: msg(&sExemplar), 12: fI64, 13: fI64, 14: fI64,
	})}
	sBuckets = schema{fields: fields(map[int]field{1: fVarint, 2: {kind: fPackedVarint}})}
	sSummaryPoint = schema{fields: fields(map[int]field{
		2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: msg(&sQuantile), 7: msg(&sKeyValue), 8: fVarint,
	})}
	sQuantile = schema{fields: fields(map[int]field{1: fI64, 2: fI64})}
	sExemplar = schema{fields: fields(map[int]field{
		2: fI64, 3: fI64, 4: fSpanID, 5: fTrace, 6: fI64, 7: msg(&sKeyValue),
	})}
}

// scanState is what one scan counts.
type scanState struct {
	records  int  // log records, valid spans, or data points of valid metrics
	messages int  // messages walked, the request itself included: what pdata would allocate
	refuse   bool // something only pdata can answer: a rejection, deprecated fields
}

// scanResult is what scanProto learnt about a body.
type scanResult struct {
	// records counts the records when ok.
	records int
	// messages counts the messages walked (all of them when err is nil):
	// the objects pdata would allocate to decode the body.
	messages int
	// ok: pdata would accept the body whole, rejecting nothing.
	ok bool
	// err is why the walk stopped early (nil when it reached the end);
	// errTooDeep is final, any other error leaves the answer to pdata.
	err error
}

// scanProto walks a protobuf Export*ServiceRequest of sig. It reports ok
// with the records when pdata would accept it whole; otherwise the caller
// must ask pdata (invalid bytes, rejected records, deprecated fields),
// unless err is errTooDeep.
func scanProto(sig signal.Signal, body []byte) scanResult {
	var top *schema
	switch sig {
	case signal.Logs:
		top = &sLogsRequest
	case signal.Traces:
		top = &sTracesRequest
	case signal.Metrics:
		top = &sMetricsRequest
	default:
		return scanResult{err: errScan}
	}
	var st scanState
	_, err := st.walk(body, top, 0)
	res := scanResult{messages: st.messages, err: err}
	if err == nil && !st.refuse {
		res.records, res.ok = st.records, true
	}
	return res
}

// walk checks buf as a message of s and returns the number of field-1
// occurrences (the data points of a roleData message).
func (st *scanState) walk(buf []byte, s *schema, depth int) (int, error) {
	st.messages++
	if s.anyFamily {
		if depth >= otlpwire.RecursionLimit {
			return 0, errTooDeep
		}
		depth++
	}
	var (
		ones int
		// roleSpan: the last trace_id / span_id seen (pdata keeps the last).
		traceID, spanID []byte
		// roleMetric: the last name, data field and its point count.
		named      bool
		dataKind   int32
		dataPoints int
	)
	pos, l := 0, len(buf)
	for pos < l {
		num, wt, p, err := otlpwire.ConsumeTag(buf, pos)
		if err != nil {
			return 0, err
		}
		pos = p
		if num == 1 {
			ones++
		}
		f := s.field(num)
		if s.role == roleResource && num == 1000 {
			st.refuse = true // pdata migrates the deprecated scope lists
		}
		switch f.kind {
		case fUnknown:
			if pos, err = otlpwire.ConsumeUnknown(buf, pos, wt); err != nil {
				return 0, err
			}
		case fScalar:
			if wt != f.wt {
				return 0, errScan
			}
			if s.role == roleMetric && num == 1 { // the name
				n, p, err := otlpwire.ConsumeLen(buf, pos)
				if err != nil {
					return 0, err
				}
				named, pos = n > 0, p
				continue
			}
			if pos, err = otlpwire.ConsumeScalar(buf, pos, wt); err != nil {
				return 0, err
			}
		case fMsg, fID16, fID8:
			if wt != otlpwire.Len {
				return 0, errScan
			}
			n, p, err := otlpwire.ConsumeLen(buf, pos)
			if err != nil {
				return 0, err
			}
			sub := buf[p-n : p]
			pos = p
			switch f.kind {
			case fID16:
				if n != 0 && n != 16 {
					return 0, errScan
				}
			case fID8:
				if n != 0 && n != 8 {
					return 0, errScan
				}
			default:
				d := 0
				if s.anyFamily {
					d = depth
				}
				points, err := st.walk(sub, f.msg, d)
				if err != nil {
					return 0, err
				}
				if s.role == roleMetric && f.msg.role == roleData {
					dataKind, dataPoints = num, points
				}
			}
			if s.role == roleSpan {
				switch num {
				case 1:
					traceID = sub
				case 2:
					spanID = sub
				}
			}
		case fPackedI64:
			switch wt {
			case otlpwire.Len:
				n, p, err := otlpwire.ConsumeLen(buf, pos)
				if err != nil {
					return 0, err
				}
				if n%8 != 0 {
					return 0, errScan
				}
				pos = p
			case otlpwire.I64:
				if pos, err = otlpwire.ConsumeScalar(buf, pos, wt); err != nil {
					return 0, err
				}
			default:
				return 0, errScan
			}
		case fPackedVarint:
			switch wt {
			case otlpwire.Len:
				n, p, err := otlpwire.ConsumeLen(buf, pos)
				if err != nil {
					return 0, err
				}
				for q := p - n; q < p; {
					if _, q, err = otlpwire.ConsumeVarint(buf[:p], q); err != nil {
						return 0, err
					}
				}
				pos = p
			case otlpwire.Varint:
				if _, pos, err = otlpwire.ConsumeVarint(buf, pos); err != nil {
					return 0, err
				}
			default:
				return 0, errScan
			}
		}
	}
	switch s.role {
	case roleLogRecord:
		st.records++
	case roleSpan:
		if allZero(traceID) || allZero(spanID) {
			st.refuse = true
		} else {
			st.records++
		}
	case roleMetric:
		if !named || dataKind == 0 {
			st.refuse = true
		} else {
			st.records += dataPoints
		}
	}
	return ones, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
