package otlpgen

import (
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Stamp says how Payload.Patch rewrites one send of a payload (see plan.go).
type Stamp struct {
	// Shift moves every time by this many nanoseconds (Pool.StampShift); 0 leaves them.
	Shift int64

	// IDs gives the send's traces new ids: trace number n of the payload gets
	// TraceID(RunID, TraceBase+n), its spans SpanID(RunID, TraceBase+n, k). Log records with a
	// trace context point at one of the last traces before SentTraces (the run's traces sent so
	// far; 0 points them at the run's first), at a span below LogSpans (every trace has at least
	// that many spans).
	IDs        bool
	RunID      uint64
	TraceBase  uint64
	SentTraces uint64
	LogSpans   int

	// Values advances counters to pass number Pass over the pool (0 sends them as encoded) and
	// varies gauges with it.
	Values bool
	Pass   uint64
}

// logTraceWindow is how many of the latest traces the logs of a send point at.
const logTraceWindow = 1024

// TraceID returns trace number seq of run runID: the run id, then a bijective scramble of seq,
// so ids never repeat within a run, runs with distinct ids never share one, and the low bytes
// look random to samplers that read them as a probability (W3C Trace Context level 2).
func TraceID(runID, seq uint64) [16]byte {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], runID)
	binary.BigEndian.PutUint64(id[8:], mix64(seq^mix64(runID)))
	return id
}

// SpanID returns the id of span k (below MaxSpansPerTrace) of trace seq of run runID: distinct
// for every (seq, k) of a run below 2^48 traces.
func SpanID(runID, seq uint64, k int) [8]byte {
	var id [8]byte
	v := mix64((seq<<16 | uint64(k)) ^ mix64(runID^0x5eed))
	if v == 0 { // the one input that scrambles to the invalid all-zero id
		v = 1
	}
	binary.BigEndian.PutUint64(id[:], v)
	return id
}

// CounterStep returns how much the payload's monotonic cumulative sums (integer counters)
// grow together from one pass to the next when Patch advances values: a rate over the
// stored series should equal the sum of the steps sent over the time they took.
func (p *Payload) CounterStep() uint64 {
	if p.plan == nil {
		return 0
	}
	return p.plan.counterStep
}

// Patchable reports whether Patch can rewrite p's ids (any encoding); times and values only
// move in protobuf (Pool.CanStamp).
func (p *Payload) Patchable() bool { return p.plan != nil }

// Patch returns p's uncompressed body rewritten as s says, written into dst's storage (grown
// if needed). The pool's body is not modified. OTLP-JSON bodies get their ids patched only.
func (p *Payload) Patch(dst []byte, s *Stamp) []byte {
	if p.plan == nil { // not from a pool: nothing known to patch
		return p.Body
	}
	dst = append(dst[:0], p.raw...)
	p.PatchCopy(dst, s)
	return dst
}

// Stamp returns p's body with its times moved by shift nanoseconds and nothing else changed:
// Patch with only Stamp.Shift.
func (p *Payload) Stamp(dst []byte, shift int64) []byte { return p.Patch(dst, &Stamp{Shift: shift}) }

// PatchCopy rewrites dst, a copy of p's body that Patch returned (for any Stamp), into what
// Patch returns for s, without copying the rest: it writes every field of the plan from the
// pool's values. A sender that keeps one copy of each payload per connection saves the copy
// of the whole body at each send (the memmove was 16% of the CPU of a 100-record logs load).
func (p *Payload) PatchCopy(dst []byte, s *Stamp) {
	pl := p.plan
	if pl == nil {
		return
	}
	for _, off := range pl.times {
		v := binary.LittleEndian.Uint64(p.raw[off:])
		binary.LittleEndian.PutUint64(dst[off:], uint64(int64(v)+s.Shift))
	}
	if s.IDs {
		patchIDs(dst, pl, s)
	} else {
		restoreIDs(dst, p.raw, pl)
	}
	pass := s.Pass
	if !s.Values {
		pass = 0
	}
	patchValues(dst, p.raw, pl, pass)
}

// restoreIDs writes the pool's ids back.
func restoreIDs(dst, raw []byte, pl *patchPlan) {
	tw, sw := 16, 8
	if pl.hex {
		tw, sw = 32, 16
	}
	for _, r := range pl.traceIDs {
		copy(dst[r.off:r.off+uint32(tw)], raw[r.off:])
	}
	for _, r := range pl.spanIDs {
		copy(dst[r.off:r.off+uint32(sw)], raw[r.off:])
	}
	for _, r := range pl.logIDs {
		copy(dst[r.trace:r.trace+uint32(tw)], raw[r.trace:])
		copy(dst[r.span:r.span+uint32(sw)], raw[r.span:])
	}
}

func patchIDs(dst []byte, pl *patchPlan, s *Stamp) {
	put := func(off uint32, id []byte) {
		if pl.hex {
			hex.Encode(dst[off:], id)
		} else {
			copy(dst[off:], id)
		}
	}
	for _, r := range pl.traceIDs {
		id := TraceID(s.RunID, s.TraceBase+r.trace)
		put(r.off, id[:])
	}
	for _, r := range pl.spanIDs {
		id := SpanID(s.RunID, s.TraceBase+r.trace, int(r.k))
		put(r.off, id[:])
	}
	window := min(s.SentTraces, logTraceWindow)
	for i, r := range pl.logIDs {
		var seq uint64
		h := mix64(uint64(i)<<32 ^ s.SentTraces ^ s.Pass<<48)
		if window > 0 {
			seq = s.SentTraces - 1 - h%window
		}
		tid := TraceID(s.RunID, seq)
		sid := SpanID(s.RunID, seq, int(h>>32)%max(s.LogSpans, 1))
		put(r.trace, tid[:])
		put(r.span, sid[:])
	}
}

// patchValues writes the values of pass from the pool's (pass 0 writes them as encoded).
func patchValues(dst, raw []byte, pl *patchPlan, pass uint64) {
	for _, c := range pl.counters {
		v := binary.LittleEndian.Uint64(raw[c.off:])
		if c.float {
			v = math.Float64bits(math.Float64frombits(v) + float64(pass)*math.Float64frombits(c.inc))
		} else {
			v += pass * c.inc
		}
		binary.LittleEndian.PutUint64(dst[c.off:], v)
	}
	for _, off := range pl.gauges {
		v := binary.LittleEndian.Uint64(raw[off:])
		if pass > 0 {
			// A steady value times 0.5..1.5, different at every pass and for every series.
			f := 0.5 + float64(mix64(pass^uint64(off)<<20)>>11)/(1<<53)
			v = math.Float64bits(math.Float64frombits(v) * f)
		}
		binary.LittleEndian.PutUint64(dst[off:], v)
	}
	for _, off := range pl.wiggles {
		v := int64(binary.LittleEndian.Uint64(raw[off:]))
		if pass > 0 {
			v = max(v+int64(mix64(pass^uint64(off)<<20)%21)-10, 0)
		}
		binary.LittleEndian.PutUint64(dst[off:], uint64(v))
	}
}
