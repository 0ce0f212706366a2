package otlpgen

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/signal"
)

// A pool is encoded once, and a load replays it: without help every cycle of the pool would send
// the same times, trace ids and counter values again. The patch plan lists where in a protobuf
// body those fields are, so that Payload.Patch can rewrite them in a copy at each send with no
// re-encoding: every field it touches has a fixed width (fixed64 times and values, 16- and
// 8-byte ids), so the body's length and Content-Length stay.
//
// What moves:
//   - times: every record time (a log's time and observed time, a span's start and end and its
//     events' times, a data point's time) and the start of a delta point. A cumulative or
//     summary point's start stays where the pool put it, before the load began, as a process
//     start would: moving it would make every point a counter reset.
//   - trace and span ids, derived from the run id and a run-wide trace number (TraceID,
//     SpanID), parent ids with them, so every trace sent is new and its tree stays whole.
//   - a log record's trace context, pointed at a trace the run has sent.
//   - values: cumulative counters, histograms (buckets, count and sum together) and summaries
//     grow by a fixed increment per pass over the pool; gauges and up-down counters vary.

// patchPlan holds the offsets in a payload's uncompressed body of what Patch rewrites.
type patchPlan struct {
	times    []uint32
	traceIDs []idRef // trace_id fields: trace is the trace's number in the payload
	spanIDs  []idRef // span_id and parent_span_id fields: trace and index k in the trace
	logIDs   []logRef
	counters []counterRef
	gauges   []uint32 // double gauge values
	wiggles  []uint32 // int values of up-down counters
	// counterStep is the growth per pass of the payload's monotonic cumulative sums together.
	counterStep uint64
	// hex: the ids are OTLP-JSON hex strings (planJSON), not bytes; such a plan has no times
	// or values, whose JSON decimal strings change width.
	hex bool
}

type idRef struct {
	off   uint32
	k     uint32
	trace uint64
}

// logRef is the trace context of one log record: the offsets of its trace id and span id.
type logRef struct{ trace, span uint32 }

// counterRef is a cumulative value that grows by inc per pass: an int (sfixed64 or fixed64)
// or, with float, a double whose inc is math.Float64bits of the increment.
type counterRef struct {
	off   uint32
	float bool
	inc   uint64
}

// planner collects a patchPlan while walking a body.
type planner struct {
	plan     patchPlan
	traceIDs map[pcommon.TraceID]uint32
	spanIDs  map[pcommon.SpanID]uint64
}

func (pl *planner) time(off int) { pl.plan.times = append(pl.plan.times, uint32(off)) }

// increment is the per-pass growth of the counter at off: a small pseudo-random number of
// events, fixed per series so that a rate over the series is steady.
func increment(off int, span uint64) uint64 { return mix64(uint64(off)) % span }

// planPatches returns the patch plan of body, an Export*ServiceRequest of sig in protobuf. The
// id maps say which trace and span each id of the payload belongs to.
func planPatches(sig signal.Signal, body []byte, traceIDs map[pcommon.TraceID]uint32, spanIDs map[pcommon.SpanID]uint64) (*patchPlan, error) {
	pl := &planner{traceIDs: traceIDs, spanIDs: spanIDs}
	var err error
	switch sig {
	case signal.Logs:
		err = nested(body, 0, []protowire.Number{1, 2, 2}, pl.logRecord)
	case signal.Traces:
		err = nested(body, 0, []protowire.Number{1, 2, 2}, pl.span)
	case signal.Metrics:
		err = nested(body, 0, []protowire.Number{1, 2, 2}, pl.metric)
	default:
		return nil, fmt.Errorf("patch plan: unknown signal %d", sig)
	}
	if err != nil {
		return nil, fmt.Errorf("patch plan of a %s request: %w", sig, err)
	}
	return &pl.plan, nil
}

// planJSON returns the patch plan of an OTLP-JSON body of sig: its "traceId", "spanId" and
// "parentSpanId" hex strings, which keep their width whatever the id. Times and values are
// decimal strings whose width changes, and stay as encoded.
func planJSON(sig signal.Signal, body []byte, traceIDs map[pcommon.TraceID]uint32, spanIDs map[pcommon.SpanID]uint64) (*patchPlan, error) {
	plan := &patchPlan{hex: true}
	var logTrace uint32 // a log record's traceId offset, waiting for its spanId
	const tail = `Id":"`
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(tail))
		if j < 0 {
			break
		}
		at := i + j + len(tail)
		name := body[:at-len(tail)]
		end := bytes.IndexByte(body[at:], '"')
		if end < 0 {
			return nil, fmt.Errorf("json plan: unterminated id at %d", at)
		}
		i = at + end
		isTrace := bytes.HasSuffix(name, []byte(`"trace`))
		if !isTrace && !bytes.HasSuffix(name, []byte(`"span`)) && !bytes.HasSuffix(name, []byte(`"parentSpan`)) {
			continue
		}
		raw, err := hex.DecodeString(string(body[at : at+end]))
		if err != nil {
			return nil, fmt.Errorf("json plan: id at %d: %w", at, err)
		}
		switch {
		case sig == signal.Logs && isTrace:
			logTrace = uint32(at)
		case sig == signal.Logs && logTrace != 0:
			plan.logIDs = append(plan.logIDs, logRef{trace: logTrace, span: uint32(at)})
			logTrace = 0
		case sig == signal.Traces && isTrace && len(raw) == 16:
			n, ok := traceIDs[pcommon.TraceID(raw)]
			if !ok {
				return nil, fmt.Errorf("json plan: trace id %x at %d not booked by the generator", raw, at)
			}
			plan.traceIDs = append(plan.traceIDs, idRef{off: uint32(at), trace: uint64(n)})
		case sig == signal.Traces && len(raw) == 8:
			tk, ok := spanIDs[pcommon.SpanID(raw)]
			if !ok {
				return nil, fmt.Errorf("json plan: span id %x at %d not booked by the generator", raw, at)
			}
			plan.spanIDs = append(plan.spanIDs, idRef{off: uint32(at), trace: tk >> 16, k: uint32(tk & 0xffff)})
		}
	}
	return plan, nil
}

// logRecord plans a LogRecord: time_unix_nano(1), observed_time_unix_nano(11), trace_id(9),
// span_id(10).
func (pl *planner) logRecord(rec []byte, base int) error {
	var ref logRef
	err := fields(rec, base, func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error {
		switch {
		case typ == protowire.Fixed64Type && (num == 1 || num == 11):
			pl.time(vbase)
		case typ == protowire.BytesType && num == 9 && len(v) == 16:
			ref.trace = uint32(vbase)
		case typ == protowire.BytesType && num == 10 && len(v) == 8:
			ref.span = uint32(vbase)
		}
		return nil
	})
	if ref.trace != 0 && ref.span != 0 {
		pl.plan.logIDs = append(pl.plan.logIDs, ref)
	}
	return err
}

// span plans a Span: trace_id(1), span_id(2), parent_span_id(4), start(7), end(8),
// events(11).time_unix_nano(1).
func (pl *planner) span(span []byte, base int) error {
	return fields(span, base, func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error {
		switch {
		case typ == protowire.Fixed64Type && (num == 7 || num == 8):
			pl.time(vbase)
		case typ == protowire.BytesType && num == 1 && len(v) == 16:
			n, ok := pl.traceIDs[pcommon.TraceID(v)]
			if !ok {
				return fmt.Errorf("trace id %x at %d not booked by the generator", v, vbase)
			}
			pl.plan.traceIDs = append(pl.plan.traceIDs, idRef{off: uint32(vbase), trace: uint64(n)})
		case typ == protowire.BytesType && (num == 2 || num == 4) && len(v) == 8:
			tk, ok := pl.spanIDs[pcommon.SpanID(v)]
			if !ok {
				return fmt.Errorf("span id %x at %d not booked by the generator", v, vbase)
			}
			pl.plan.spanIDs = append(pl.plan.spanIDs, idRef{off: uint32(vbase), trace: tk >> 16, k: uint32(tk & 0xffff)})
		case typ == protowire.BytesType && num == 11:
			return fixed64s(v, vbase, func(num protowire.Number, off int) {
				if num == 1 {
					pl.time(off)
				}
			})
		}
		return nil
	})
}

// metricPoint is what the planner found in one data point.
type metricPoint struct {
	start, time       int
	value             int // as_double or as_int offset (number points), 0 if none
	double            bool
	count, sum, zeros int // fixed64 offsets, 0 if absent
	buckets           []int
	bounds            []float64
}

// metric plans a Metric, whose data is gauge(5), sum(7), histogram(9),
// exponential_histogram(10) or summary(11), each with data_points(1); sum, histogram and
// exponential histogram say their aggregation_temporality in field 2 (1 delta, 2 cumulative)
// and a sum its is_monotonic in field 3, after their points.
func (pl *planner) metric(metric []byte, base int) error {
	return fields(metric, base, func(kind protowire.Number, typ protowire.Type, v []byte, vbase int) error {
		if typ != protowire.BytesType || kind != 5 && kind != 7 && kind != 9 && kind != 10 && kind != 11 {
			return nil
		}
		var points []metricPoint
		delta, monotonic := false, false
		if err := fields(v, vbase, func(num protowire.Number, typ protowire.Type, pv []byte, pbase int) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				p, err := parsePoint(pv, pbase)
				points = append(points, p)
				return err
			case num == 2 && typ == protowire.VarintType:
				t, _ := protowire.ConsumeVarint(pv)
				delta = t == 1
			case num == 3 && typ == protowire.VarintType:
				m, _ := protowire.ConsumeVarint(pv)
				monotonic = m != 0
			}
			return nil
		}); err != nil {
			return err
		}
		for _, p := range points {
			pl.point(kind, p, delta, monotonic)
		}
		return nil
	})
}

// parsePoint finds the fields of a data point of any type: start(2), time(3), as_double(4) or
// as_int(6) of a number point, count(4) and sum(5) of the others, bucket_counts(6) and
// explicit_bounds(7) of a histogram, zero_count(7) of an exponential histogram. Where a
// number is the same field number with another meaning, the caller's metric kind decides.
func parsePoint(b []byte, base int) (metricPoint, error) {
	var p metricPoint
	err := fields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error {
		switch {
		case typ == protowire.Fixed64Type:
			switch num {
			case 2:
				p.start = vbase
			case 3:
				p.time = vbase
			case 4:
				p.value, p.double, p.count = vbase, true, vbase
			case 5:
				p.sum = vbase
			case 6:
				p.value = vbase
			case 7:
				p.zeros = vbase
			}
		case typ == protowire.BytesType && num == 6 && len(v)%8 == 0:
			for i := 0; i < len(v); i += 8 {
				p.buckets = append(p.buckets, vbase+i)
			}
		case typ == protowire.BytesType && num == 7 && len(v)%8 == 0:
			for i := 0; i < len(v); i += 8 {
				p.bounds = append(p.bounds, math.Float64frombits(binary.LittleEndian.Uint64(v[i:])))
			}
		}
		return nil
	})
	return p, err
}

// point adds one data point of a metric of the given kind to the plan.
func (pl *planner) point(kind protowire.Number, p metricPoint, delta, monotonic bool) {
	if p.time != 0 {
		pl.time(p.time)
	}
	if delta && p.start != 0 {
		pl.time(p.start)
	}
	add := func(off int, inc uint64) {
		if off != 0 {
			pl.plan.counters = append(pl.plan.counters, counterRef{off: uint32(off), inc: inc})
		}
	}
	addFloat := func(off int, inc float64) {
		if off != 0 {
			pl.plan.counters = append(pl.plan.counters, counterRef{off: uint32(off), float: true, inc: math.Float64bits(inc)})
		}
	}
	switch kind {
	case 5: // gauge
		if p.double {
			pl.plan.gauges = append(pl.plan.gauges, uint32(p.value))
		} else if p.value != 0 {
			pl.plan.wiggles = append(pl.plan.wiggles, uint32(p.value))
		}
	case 7: // sum
		switch {
		case !monotonic && !p.double && p.value != 0:
			pl.plan.wiggles = append(pl.plan.wiggles, uint32(p.value))
		case monotonic && !delta && p.double:
			addFloat(p.value, float64(1+increment(p.value, 10)))
		case monotonic && !delta:
			inc := 1 + increment(p.value, 10)
			add(p.value, inc)
			pl.plan.counterStep += inc
		}
	case 9: // histogram: buckets, and count and sum to match
		if delta || p.count == 0 || p.sum == 0 {
			return
		}
		var count uint64
		var sum float64
		for b, off := range p.buckets {
			inc := increment(off, 4)
			add(off, inc)
			count += inc
			sum += float64(inc) * bucketMid(p.bounds, b)
		}
		add(p.count, count)
		addFloat(p.sum, sum)
	case 10: // exponential histogram: observations of zero, so count grows with zero_count
		if delta || p.count == 0 || p.zeros == 0 {
			return
		}
		inc := 1 + increment(p.count, 3)
		add(p.count, inc)
		add(p.zeros, inc)
	case 11: // summary
		inc := 1 + increment(p.count, 10)
		add(p.count, inc)
		addFloat(p.sum, float64(inc)*0.8)
	}
}

// fields calls fn with every field of the message b, which starts at offset base of the body.
// For a length-delimited field v is its contents and vbase their offset; for a varint v starts
// at the value; fixed-width values are passed as their bytes.
func fields(b []byte, base int, fn func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error) error {
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return protowire.ParseError(n)
		}
		i += n
		var v []byte
		vbase := base + i
		switch typ {
		case protowire.BytesType:
			val, m := protowire.ConsumeBytes(b[i:])
			if m < 0 {
				return protowire.ParseError(m)
			}
			v, vbase = val, base+i+m-len(val)
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b[i:])
			if n < 0 {
				return protowire.ParseError(n)
			}
			v = b[i : i+n]
		}
		if err := fn(num, typ, v, vbase); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// fixed64s calls fn with the number and body offset of every fixed64 field of the message b.
func fixed64s(b []byte, base int, fn func(num protowire.Number, off int)) error {
	return fields(b, base, func(num protowire.Number, typ protowire.Type, _ []byte, vbase int) error {
		if typ == protowire.Fixed64Type {
			fn(num, vbase)
		}
		return nil
	})
}

// nested calls fn with every message reached from b through the path of length-delimited
// fields.
func nested(b []byte, base int, path []protowire.Number, fn func(msg []byte, base int) error) error {
	if len(path) == 0 {
		return fn(b, base)
	}
	return fields(b, base, func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error {
		if num != path[0] || typ != protowire.BytesType {
			return nil
		}
		return nested(v, vbase, path[1:], fn)
	})
}
