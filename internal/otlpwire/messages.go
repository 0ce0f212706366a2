package otlpwire

import "github.com/otelbench/otelbench/internal/signal"

// Kind is what a known field holds, and so the wire type pdata requires of it.
type Kind uint8

// Field kinds. pdata checks no UTF-8 in a string field, so a string is KBytes.
const (
	KUnknown       Kind = iota // a field the message does not know: skipped as pdata's ConsumeUnknown does
	KVarint                    // wire type Varint
	KFixed64                   // wire type I64
	KFixed32                   // wire type I32
	KBytes                     // wire type Len: a string or bytes
	KMessage                   // wire type Len: a message of FieldDesc.Msg
	KTraceID                   // wire type Len: 0 or 16 bytes
	KSpanID                    // wire type Len: 0 or 8 bytes
	KPackedFixed64             // repeated fixed64 or double: a packed run (a multiple of 8 bytes) or one I64
	KPackedVarint              // repeated varint: a packed run of whole varints or one Varint
)

// FieldDesc describes a known field of a message.
type FieldDesc struct {
	Kind Kind
	wire uint8    // the wire type Kind requires (a packed kind's single value; Len for its run)
	Msg  *Message // the field's message, for KMessage
}

// Message describes an OTLP protobuf message as pdata v1.71's generated UnmarshalProto code
// reads it (generated_proto_*.go): the kind of each known field, by field number.
type Message struct {
	Name   string
	fields []FieldDesc // by field number; KUnknown where none
	// anyFamily: AnyValue, ArrayValue, KeyValue and KeyValueList each count one level
	// towards RecursionLimit, as pdata counts them.
	anyFamily bool
}

// Field returns the descriptor of field num (KUnknown for a field m does not know).
func (m *Message) Field(num int32) FieldDesc {
	if num >= 0 && int(num) < len(m.fields) {
		return m.fields[num]
	}
	return FieldDesc{}
}

// The OTLP messages, from pdata v1.71's generated_proto_*.go. They are read-only tables.
var (
	AnyValue, ArrayValue, KeyValue, KeyValueList Message
	EntityRef, Resource, Scope                   Message

	LogsRequest, ResourceLogs, ScopeLogs, LogRecord Message

	TracesRequest, ResourceSpans, ScopeSpans, Span Message
	SpanEvent, SpanLink, Status                    Message

	MetricsRequest, ResourceMetrics, ScopeMetrics, Metric Message
	Gauge, Sum, Histogram, ExpHistogram, Summary          Message
	NumberPoint, HistogramPoint, ExpHistogramPoint        Message
	Buckets, SummaryPoint, Quantile, Exemplar             Message
)

// Request returns the Export*ServiceRequest message of sig, or nil for an invalid signal.
func Request(sig signal.Signal) *Message {
	return signal.Pick(sig, &LogsRequest, &MetricsRequest, &TracesRequest)
}

// kindWire is the wire type each kind requires.
var kindWire = [...]uint8{
	KVarint: Varint, KFixed64: I64, KFixed32: I32, KBytes: Len, KMessage: Len,
	KTraceID: Len, KSpanID: Len, KPackedFixed64: I64, KPackedVarint: Varint,
}

func msg(m *Message) FieldDesc { return FieldDesc{Kind: KMessage, Msg: m} }

var (
	fString = FieldDesc{Kind: KBytes}
	fVarint = FieldDesc{Kind: KVarint}
	fI64    = FieldDesc{Kind: KFixed64}
	fI32    = FieldDesc{Kind: KFixed32}
	fTrace  = FieldDesc{Kind: KTraceID}
	fSpanID = FieldDesc{Kind: KSpanID}
)

// define sets m to the message name with fields (number → descriptor).
func define(m *Message, name string, fields map[int]FieldDesc) {
	n := 0
	for k := range fields {
		n = max(n, k+1)
	}
	m.Name, m.fields = name, make([]FieldDesc, n)
	for k, f := range fields {
		f.wire = kindWire[f.Kind]
		m.fields[k] = f
	}
}

func init() {
	define(&AnyValue, "AnyValue", map[int]FieldDesc{
		1: fString, 2: fVarint, 3: fVarint, 4: fI64,
		5: msg(&ArrayValue), 6: msg(&KeyValueList), 7: fString, 8: fVarint,
	})
	define(&ArrayValue, "ArrayValue", map[int]FieldDesc{1: msg(&AnyValue)})
	define(&KeyValue, "KeyValue", map[int]FieldDesc{1: fString, 2: msg(&AnyValue), 3: fVarint})
	define(&KeyValueList, "KeyValueList", map[int]FieldDesc{1: msg(&KeyValue)})
	for _, m := range []*Message{&AnyValue, &ArrayValue, &KeyValue, &KeyValueList} {
		m.anyFamily = true
	}
	define(&EntityRef, "EntityRef", map[int]FieldDesc{1: fString, 2: fString, 3: fString, 4: fString})
	define(&Resource, "Resource", map[int]FieldDesc{1: msg(&KeyValue), 2: fVarint, 3: msg(&EntityRef)})
	define(&Scope, "InstrumentationScope", map[int]FieldDesc{1: fString, 2: fString, 3: msg(&KeyValue), 4: fVarint})
	defineLogs()
	defineTraces()
	defineMetrics()
	definePoints()
}

func defineLogs() {
	define(&LogsRequest, "ExportLogsServiceRequest", map[int]FieldDesc{1: msg(&ResourceLogs)})
	define(&ResourceLogs, "ResourceLogs", map[int]FieldDesc{1: msg(&Resource), 2: msg(&ScopeLogs), 3: fString})
	define(&ScopeLogs, "ScopeLogs", map[int]FieldDesc{1: msg(&Scope), 2: msg(&LogRecord), 3: fString})
	define(&LogRecord, "LogRecord", map[int]FieldDesc{
		1: fI64, 2: fVarint, 3: fString, 5: msg(&AnyValue), 6: msg(&KeyValue), 7: fVarint,
		8: fI32, 9: fTrace, 10: fSpanID, 11: fI64, 12: fString,
	})
}

func defineTraces() {
	define(&TracesRequest, "ExportTraceServiceRequest", map[int]FieldDesc{1: msg(&ResourceSpans)})
	define(&ResourceSpans, "ResourceSpans", map[int]FieldDesc{1: msg(&Resource), 2: msg(&ScopeSpans), 3: fString})
	define(&ScopeSpans, "ScopeSpans", map[int]FieldDesc{1: msg(&Scope), 2: msg(&Span), 3: fString})
	define(&Span, "Span", map[int]FieldDesc{
		1: fTrace, 2: fSpanID, 3: fString, 4: fSpanID, 5: fString, 6: fVarint, 7: fI64, 8: fI64,
		9: msg(&KeyValue), 10: fVarint, 11: msg(&SpanEvent), 12: fVarint, 13: msg(&SpanLink),
		14: fVarint, 15: msg(&Status), 16: fI32,
	})
	define(&SpanEvent, "Span.Event", map[int]FieldDesc{1: fI64, 2: fString, 3: msg(&KeyValue), 4: fVarint})
	define(&SpanLink, "Span.Link", map[int]FieldDesc{
		1: fTrace, 2: fSpanID, 3: fString, 4: msg(&KeyValue), 5: fVarint, 6: fI32,
	})
	define(&Status, "Status", map[int]FieldDesc{2: fString, 3: fVarint})
}

func defineMetrics() {
	define(&MetricsRequest, "ExportMetricsServiceRequest", map[int]FieldDesc{1: msg(&ResourceMetrics)})
	define(&ResourceMetrics, "ResourceMetrics", map[int]FieldDesc{1: msg(&Resource), 2: msg(&ScopeMetrics), 3: fString})
	define(&ScopeMetrics, "ScopeMetrics", map[int]FieldDesc{1: msg(&Scope), 2: msg(&Metric), 3: fString})
	define(&Metric, "Metric", map[int]FieldDesc{
		1: fString, 2: fString, 3: fString, 5: msg(&Gauge), 7: msg(&Sum), 9: msg(&Histogram),
		10: msg(&ExpHistogram), 11: msg(&Summary), 12: msg(&KeyValue),
	})
	define(&Gauge, "Gauge", map[int]FieldDesc{1: msg(&NumberPoint)})
	define(&Sum, "Sum", map[int]FieldDesc{1: msg(&NumberPoint), 2: fVarint, 3: fVarint})
	define(&Histogram, "Histogram", map[int]FieldDesc{1: msg(&HistogramPoint), 2: fVarint})
	define(&ExpHistogram, "ExponentialHistogram", map[int]FieldDesc{1: msg(&ExpHistogramPoint), 2: fVarint})
	define(&Summary, "Summary", map[int]FieldDesc{1: msg(&SummaryPoint)})
}

func definePoints() {
	define(&NumberPoint, "NumberDataPoint", map[int]FieldDesc{
		2: fI64, 3: fI64, 4: fI64, 5: msg(&Exemplar), 6: fI64, 7: msg(&KeyValue), 8: fVarint,
	})
	define(&HistogramPoint, "HistogramDataPoint", map[int]FieldDesc{
		2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: {Kind: KPackedFixed64}, 7: {Kind: KPackedFixed64},
		8: msg(&Exemplar), 9: msg(&KeyValue), 10: fVarint, 11: fI64, 12: fI64,
	})
	define(&ExpHistogramPoint, "ExponentialHistogramDataPoint", map[int]FieldDesc{
		1: msg(&KeyValue), 2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: fVarint, 7: fI64,
		8: msg(&Buckets), 9: msg(&Buckets), 10: fVarint, 11: msg(&Exemplar), 12: fI64, 13: fI64, 14: fI64,
	})
	define(&Buckets, "ExponentialHistogramDataPoint.Buckets", map[int]FieldDesc{1: fVarint, 2: {Kind: KPackedVarint}})
	define(&SummaryPoint, "SummaryDataPoint", map[int]FieldDesc{
		2: fI64, 3: fI64, 4: fI64, 5: fI64, 6: msg(&Quantile), 7: msg(&KeyValue), 8: fVarint,
	})
	define(&Quantile, "SummaryDataPoint.ValueAtQuantile", map[int]FieldDesc{1: fI64, 2: fI64})
	define(&Exemplar, "Exemplar", map[int]FieldDesc{
		2: fI64, 3: fI64, 4: fSpanID, 5: fTrace, 6: fI64, 7: msg(&KeyValue),
	})
}
