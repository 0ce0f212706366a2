package otlpgen

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var spanNames = [...]string{"GET /api/orders", "SELECT orders", "cache.get", "POST /pay", "publish", "render"}

// traces returns one request's worth of spans, grouped in trace trees of
// cfg.SpansPerTrace spans: each tree has one root (kind server) and children
// whose parent is an earlier span of the same tree, nested in its time range.
func (g *generator) traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	g.putResource(rs.Resource().Attributes(), g.service())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("otelbench/otlpgen")
	ss.Scope().SetVersion("1")
	spans := ss.Spans()
	spans.EnsureCapacity(g.cfg.Records)

	type node struct {
		id         pcommon.SpanID
		start, end time.Duration
	}
	tree := make([]node, 0, g.cfg.SpansPerTrace)
	var trace pcommon.TraceID
	for i := range g.cfg.Records {
		if i%g.cfg.SpansPerTrace == 0 {
			trace = g.traceID()
			tree = tree[:0]
		}
		s := spans.AppendEmpty()
		s.SetTraceID(trace)
		id := g.spanID()
		s.SetSpanID(id)
		var start, end time.Duration
		if len(tree) == 0 {
			start = time.Duration(i) * time.Millisecond
			end = start + 50*time.Millisecond + time.Duration(g.rng.IntN(50))*time.Millisecond
			s.SetKind(ptrace.SpanKindServer)
		} else {
			p := tree[g.rng.IntN(len(tree))]
			s.SetParentSpanID(p.id)
			span := p.end - p.start
			start = p.start + time.Duration(g.rng.Int64N(int64(span)/2+1))
			end = start + time.Duration(g.rng.Int64N(int64(p.end-start))) + 1
			if g.rng.IntN(2) == 0 {
				s.SetKind(ptrace.SpanKindClient)
			} else {
				s.SetKind(ptrace.SpanKindInternal)
			}
		}
		tree = append(tree, node{id, start, end})
		s.SetName(spanNames[g.rng.IntN(len(spanNames))])
		s.SetStartTimestamp(g.ts(start))
		s.SetEndTimestamp(g.ts(end))
		g.putAttrs(s.Attributes())
		if g.rng.IntN(20) == 0 {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("upstream timeout")
			ev := s.Events().AppendEmpty()
			ev.SetName("exception")
			ev.SetTimestamp(g.ts(end))
			ev.Attributes().PutStr("exception.type", "TimeoutError")
		} else {
			s.Status().SetCode(ptrace.StatusCodeOk)
		}
	}
	return td
}
