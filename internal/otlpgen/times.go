package otlpgen

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/signal"
)

// Live times. A pool is encoded once, so its records carry the times of the pool's BaseTime, and
// a load that replays it sends the same times over and over: every time index of the server
// then takes them inside one small range, where a live agent's times advance with the clock.
// Payload.Stamp moves a protobuf body's times by a shift at send time, in a copy: it rewrites
// the fixed64 fields in place (their width never changes), so the body needs no re-encoding and
// its Content-Length stays. Bodies in OTLP-JSON or compressed cannot be patched so and replay
// their times (Pool.CanStamp).

// Which times move: every record time (a log's time and observed time, a span's start and end
// and its events' times, a data point's time) and the start of a delta point (its interval
// moves with it). A cumulative or summary point's start stays where the pool put it, before the
// load began, as a process start would: moving it would make every point a counter reset.

// timeOffsets returns the offsets in body, an Export*ServiceRequest of sig in protobuf, of the
// fixed64 times Stamp moves.
func timeOffsets(sig signal.Signal, body []byte) ([]uint32, error) {
	var offs []uint32
	add := func(off int) { offs = append(offs, uint32(off)) }
	var err error
	switch sig {
	case signal.Logs:
		// ExportLogsServiceRequest.resource_logs(1).scope_logs(2).log_records(2):
		// time_unix_nano(1), observed_time_unix_nano(11).
		err = nested(body, 0, []protowire.Number{1, 2, 2}, func(rec []byte, base int) error {
			return fixed64s(rec, base, func(num protowire.Number, off int) {
				if num == 1 || num == 11 {
					add(off)
				}
			})
		})
	case signal.Traces:
		// ExportTraceServiceRequest.resource_spans(1).scope_spans(2).spans(2): start(7),
		// end(8), events(11).time_unix_nano(1).
		err = nested(body, 0, []protowire.Number{1, 2, 2}, func(span []byte, base int) error {
			if err := fixed64s(span, base, func(num protowire.Number, off int) {
				if num == 7 || num == 8 {
					add(off)
				}
			}); err != nil {
				return err
			}
			return nested(span, base, []protowire.Number{11}, func(ev []byte, base int) error {
				return fixed64s(ev, base, func(num protowire.Number, off int) {
					if num == 1 {
						add(off)
					}
				})
			})
		})
	case signal.Metrics:
		// ExportMetricsServiceRequest.resource_metrics(1).scope_metrics(2).metrics(2), whose
		// data is gauge(5), sum(7), histogram(9), exponential_histogram(10) or summary(11),
		// each with data_points(1) holding start_time_unix_nano(2) and time_unix_nano(3); sum,
		// histogram and exponential histogram say their aggregation_temporality in field 2
		// (1 delta, 2 cumulative), after their points.
		err = nested(body, 0, []protowire.Number{1, 2, 2}, func(metric []byte, base int) error {
			return fields(metric, base, func(num protowire.Number, typ protowire.Type, v []byte, vbase int) error {
				if typ != protowire.BytesType || num != 5 && num != 7 && num != 9 && num != 10 && num != 11 {
					return nil
				}
				var starts []int
				delta := false
				if err := fields(v, vbase, func(num protowire.Number, typ protowire.Type, pv []byte, pbase int) error {
					switch {
					case num == 1 && typ == protowire.BytesType:
						return fixed64s(pv, pbase, func(num protowire.Number, off int) {
							switch num {
							case 2:
								starts = append(starts, off)
							case 3:
								add(off)
							}
						})
					case num == 2 && typ == protowire.VarintType:
						t, n := protowire.ConsumeVarint(pv)
						if n < 0 {
							return protowire.ParseError(n)
						}
						delta = t == 1
					}
					return nil
				}); err != nil {
					return err
				}
				if delta {
					for _, off := range starts {
						add(off)
					}
				}
				return nil
			})
		})
	default:
		return nil, fmt.Errorf("time offsets: unknown signal %d", sig)
	}
	if err != nil {
		return nil, fmt.Errorf("time offsets of a %s request: %w", sig, err)
	}
	return offs, nil
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

// Stamp returns p's body with its times moved by shift nanoseconds (see timeOffsets), written
// into dst's storage (grown if needed), so a load sends its records at the clock's time while
// the pool stays as encoded. Without time offsets (a pool that cannot be stamped) it returns
// p.Body itself.
func (p *Payload) Stamp(dst []byte, shift int64) []byte {
	if p.timeOffsets == nil {
		return p.Body
	}
	dst = append(dst[:0], p.Body...)
	for _, off := range p.timeOffsets {
		v := binary.LittleEndian.Uint64(dst[off:])
		binary.LittleEndian.PutUint64(dst[off:], uint64(int64(v)+shift))
	}
	return dst
}
