package otlpcodec

import (
	"errors"

	"github.com/otelbench/otelbench/internal/hexid"
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
// ConsumeUnknown, and the AnyValue family stops at its recursion limit:
// the tables and checks are otlpwire's walker, which the stager shares.
//
// It only ever answers "pdata would accept this with these records and
// reject nothing". Everything else (a body it cannot prove valid, a
// rejected span or metric, the deprecated field-1000 scope lists pdata
// migrates) sends Decode down the pdata path, which owns every error
// message and every partial-success rewrite. FuzzScanMatchesPdata holds the
// two to the same answers.

// errScan is the scanner's error for a request of no known signal: the
// caller falls back to pdata, which says what is wrong. errTooDeep is the
// one error the scanner answers itself: an AnyValue nested to
// otlpwire.RecursionLimit, which pdata's UnmarshalProto refuses too,
// whatever follows. Every other error (otlpwire's) leaves the answer to pdata.
var (
	errScan    = errors.New("otlp scan: not provably valid")
	errTooDeep = otlpwire.ErrTooDeep
)

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
	top := otlpwire.Request(sig)
	if top == nil {
		return scanResult{err: errScan}
	}
	var st scanState
	_, err := st.walk(top, roleContainer, body)
	res := scanResult{messages: st.messages, err: err}
	if err == nil && !st.refuse {
		res.records, res.ok = st.records, true
	}
	return res
}

// role is what the scan counts or checks in a message on the way to the records.
type role uint8

const (
	roleContainer role = iota // a request or a scope entry
	roleResource              // Resource{Logs,Spans,Metrics}: field 1000 sends the request to pdata
	roleLogRecord             // counted
	roleSpan                  // counted when trace_id and span_id are not all zeroes
	roleMetric                // its data points counted when named and with data
	roleData                  // Gauge/Sum/Histogram/ExponentialHistogram/Summary: field 1 is a data point
)

// roleOf is the role of m, a message the scan descends into.
func roleOf(m *otlpwire.Message) role {
	switch m {
	case &otlpwire.ResourceLogs, &otlpwire.ResourceSpans, &otlpwire.ResourceMetrics:
		return roleResource
	case &otlpwire.LogRecord:
		return roleLogRecord
	case &otlpwire.Span:
		return roleSpan
	case &otlpwire.Metric:
		return roleMetric
	case &otlpwire.Gauge, &otlpwire.Sum, &otlpwire.Histogram, &otlpwire.ExpHistogram, &otlpwire.Summary:
		return roleData
	}
	return roleContainer
}

// walk reads b, a message m of role r, with an otlpwire.Reader, descends into
// the messages on the way to the records, hands every other message to
// otlpwire.Check, and counts. It returns the number of field-1 occurrences
// (the data points of a roleData message).
func (st *scanState) walk(m *otlpwire.Message, r role, b []byte) (int, error) {
	st.messages++
	var (
		ones int
		// roleSpan: the last trace_id / span_id seen (pdata keeps the last).
		traceID, spanID []byte
		// roleMetric: the last name, data field and its point count.
		named      bool
		dataKind   int32
		dataPoints int
	)
	rd := otlpwire.NewReader(m, b)
	for rd.Next() {
		f := &rd
		if f.Num == 1 {
			ones++
		}
		switch {
		case f.Kind == otlpwire.KMessage && descends(r, f.Msg()):
			sub := roleOf(f.Msg())
			points, err := st.walk(f.Msg(), sub, f.Bytes())
			if err != nil {
				return 0, err
			}
			if sub == roleData {
				dataKind, dataPoints = f.Num, points
			}
		case f.Kind == otlpwire.KMessage:
			n, err := otlpwire.Check(f.Msg(), f.Bytes(), 0)
			if err != nil {
				return 0, err
			}
			st.messages += n
		case r == roleResource && f.Num == 1000:
			st.refuse = true // pdata migrates the deprecated scope lists
		case r == roleSpan && f.Num == 1:
			traceID = f.Bytes()
		case r == roleSpan && f.Num == 2:
			spanID = f.Bytes()
		case r == roleMetric && f.Num == 1:
			named = len(f.Bytes()) > 0
		}
	}
	if err := rd.Err(); err != nil {
		return 0, err
	}
	switch r {
	case roleLogRecord:
		st.records++
	case roleSpan:
		if hexid.IsZero(traceID) || hexid.IsZero(spanID) {
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

// descends reports whether the scan walks sub, a message field of a message of role r, itself:
// the entries and records under a request, and a metric's data.
func descends(r role, sub *otlpwire.Message) bool {
	switch r {
	case roleContainer, roleResource, roleMetric:
		return sub != &otlpwire.Resource && sub != &otlpwire.Scope && sub != &otlpwire.KeyValue
	}
	return false
}
