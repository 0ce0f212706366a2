package loadgen

import (
	"fmt"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// scheduled is one entry of the mix's cycle of sends: the signal, and which of the signal's
// sends in the cycle it is.
type scheduled struct {
	sig    signal.Signal
	occ    int64 // the signal's sends before this one in the cycle
	weight int64 // the signal's sends per cycle
}

// sends returns the cycle of schedule with each signal's send numbers, so that send n of the
// run is send (n/len)*weight+occ of its signal and every payload of the pool comes round in
// turn, once per pass.
func (m Mix) sends() []scheduled {
	cycle := m.schedule()
	out := make([]scheduled, len(cycle))
	var seen [signal.Count]int64
	for i, sig := range cycle {
		out[i] = scheduled{sig: sig, occ: seen[sig.Index()], weight: int64(m[sig.Index()])}
		seen[sig.Index()]++
	}
	return out
}

// bodyBuffers hold one worker's (or connection's) patched and compressed body, reused from
// send to send where the sender has written a body whole before it returns.
type bodyBuffers struct {
	patched, packed []byte
	// copies keeps a copy of each payload this worker sent, within copyBudget bytes, so that
	// a send rewrites only the patched fields (otlpgen.Payload.PatchCopy).
	copies map[*otlpgen.Payload][]byte
	cached int
}

// copyBudget bounds the bytes of payload copies all workers keep (bodyBuffers.copies).
const copyBudget = 64 << 20

// prepare picks the payload of send n and returns the body to send at sent: the pool's as
// encoded, or a copy with its times moved to sent, new trace ids and advanced counters
// (otlpgen.Payload.Patch), compressed if the run compresses.
func (r *runner) prepare(n int64, bb *bodyBuffers, sent time.Time) (*otlpgen.Payload, []byte, error) {
	s := r.schedule[n%int64(len(r.schedule))]
	i := uint64(n/int64(len(r.schedule))*s.weight + s.occ)
	p := r.pool.Get(s.sig, i)
	if !r.stamp && !r.ids && !r.values {
		return p, p.Body, nil
	}
	st := otlpgen.Stamp{IDs: r.ids, RunID: r.cfg.RunID, Values: r.values, Pass: r.pool.Pass(s.sig, i)}
	if r.values && st.Pass > 0 && s.sig == signal.Metrics {
		r.counterIncrease.Add(p.CounterStep())
	}
	if r.stamp {
		st.Shift = r.pool.StampShift(sent)
	}
	if r.ids {
		switch s.sig {
		case signal.Traces:
			st.TraceBase = r.traces.Add(uint64(p.Traces)) - uint64(p.Traces)
		case signal.Logs:
			st.SentTraces, st.LogSpans = r.traces.Load(), r.pool.MinTraceSpans()
		}
	}
	body := r.patch(p, bb, &st)
	if !r.compress {
		return p, body, nil
	}
	z := r.compressors.Get().(*otlpgen.Compressor)
	packed, err := z.Compress(body)
	bb.packed = append(bb.packed[:0], packed...)
	r.compressors.Put(z)
	if err != nil {
		return p, nil, fmt.Errorf("%w: %v", errNoBody, err)
	}
	return p, bb.packed, nil
}

// patch returns p patched for st: in the worker's own copy of p when it has one or the budget
// allows one more, else in its scratch buffer.
func (r *runner) patch(p *otlpgen.Payload, bb *bodyBuffers, st *otlpgen.Stamp) []byte {
	if cp, ok := bb.copies[p]; ok {
		p.PatchCopy(cp, st)
		return cp
	}
	if r.freshBodies || bb.cached+p.RawBytes > copyBudget/r.cfg.Concurrency {
		bb.patched = p.Patch(bb.patched, st)
		return bb.patched
	}
	if bb.copies == nil {
		bb.copies = map[*otlpgen.Payload][]byte{}
	}
	cp := p.Patch(nil, st)
	bb.copies[p], bb.cached = cp, bb.cached+len(cp)
	return cp
}
