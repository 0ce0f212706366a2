package query

import (
	"cmp"
	"slices"

	"github.com/otelbench/otelbench/internal/hexid"
)

// spanIndex maps span ids to positions. OTLP span ids are 8 bytes, stored
// as 16 hex digits: keyed as uint64 the map hashes a word, not a string
// (BuildTree's largest cost on a 161,000-span trace). Any other id shape
// falls back to string keys.
func spanIndex(spans []Span) func(string) (int32, bool) {
	byNum := make(map[uint64]int32, len(spans))
	for i := range spans {
		v, ok := hexid.Parse64(spans[i].SpanID)
		if !ok {
			byStr := make(map[string]int32, len(spans))
			for i := range spans {
				byStr[spans[i].SpanID] = int32(i)
			}
			return func(id string) (int32, bool) { p, ok := byStr[id]; return p, ok }
		}
		byNum[v] = int32(i)
	}
	return func(id string) (int32, bool) {
		v, ok := hexid.Parse64(id)
		if !ok {
			return 0, false
		}
		p, ok := byNum[v]
		return p, ok
	}
}

// BuildTree orders spans into a TraceTree. It is iterative, so a
// 100,000-deep chain costs no recursion.
func BuildTree(traceID string, spans []Span) *TraceTree {
	lookup := spanIndex(spans)
	parent := make([]int32, len(spans))
	for i := range spans {
		s := &spans[i]
		parent[i] = -1
		if s.ParentSpanID == "" {
			continue
		}
		if p, ok := lookup(s.ParentSpanID); ok && int(p) != i {
			parent[i] = p
		} else {
			parent[i] = orphan
		}
	}
	return buildTree(traceID, spans, parent)
}

// buildTree orders spans into a TraceTree given each span's parent index
// (-1 for a root, orphan for a missing parent); parent is overwritten.
func buildTree(traceID string, spans []Span, parent []int32) *TraceTree {
	n := len(spans)
	t := &TraceTree{TraceID: traceID, SpanCount: n}
	// children in CSR form.
	childCount := make([]int32, n+1)
	services := map[string]struct{}{}
	t.StartTimeUnixNano, t.EndTimeUnixNano = spans[0].StartTimeUnixNano, spans[0].EndTimeUnixNano
	lastService := "\x00" // spans of a service come in runs: skip the map for repeats
	for i := range spans {
		s := &spans[i]
		p := parent[i]
		if p == orphan {
			p = -1
			parent[i] = -1
			t.Orphans++
		}
		childCount[p+1]++
		if s.Service != lastService {
			services[s.Service] = struct{}{}
			lastService = s.Service
		}
		t.StartTimeUnixNano = min(t.StartTimeUnixNano, s.StartTimeUnixNano)
		t.EndTimeUnixNano = max(t.EndTimeUnixNano, s.EndTimeUnixNano)
		t.Error = t.Error || s.StatusCode == StatusError
	}
	t.DurationNano = t.EndTimeUnixNano - t.StartTimeUnixNano
	// offsets: slot 0 holds the roots (parent -1), slot p+1 the children of p.
	off := make([]int32, n+2)
	for i := 0; i <= n; i++ {
		off[i+1] = off[i] + childCount[i]
	}
	kids := make([]int32, n)
	fill := slices.Clone(off[:n+1])
	for i := range spans {
		k := parent[i] + 1
		kids[fill[k]] = int32(i)
		fill[k]++
	}
	byStart := func(a, b int32) int {
		return cmp.Or(cmp.Compare(spans[a].StartTimeUnixNano, spans[b].StartTimeUnixNano), cmp.Compare(a, b))
	}
	for k := 0; k <= n; k++ {
		slices.SortFunc(kids[off[k]:off[k+1]], byStart)
	}
	// Pre-order DFS with an explicit stack. A cycle (a→b→a, no root) leaves
	// spans unvisited; they are appended as extra roots. The DFS computes
	// each span's new position and fills Depth/Parent/Children in place;
	// the spans are then permuted in place, so a 161,000-span trace is
	// never held twice.
	newIdx := make([]int32, n)
	next := 0
	visited := make([]bool, n)
	type frame struct{ span, depth int32 }
	stack := make([]frame, 0, 64)
	visit := func(rootKids []int32) {
		for j := len(rootKids) - 1; j >= 0; j-- {
			stack = append(stack, frame{rootKids[j], 0})
		}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if visited[f.span] {
				continue
			}
			visited[f.span] = true
			s := &spans[f.span]
			s.Depth = int(f.depth)
			s.Parent = -1
			if p := parent[f.span]; p >= 0 && visited[p] {
				s.Parent = int(newIdx[p])
			} else {
				t.Roots = append(t.Roots, next)
			}
			s.Children = int(childCount[f.span+1])
			t.MaxDepth = max(t.MaxDepth, s.Depth)
			newIdx[f.span] = int32(next)
			next++
			ck := kids[off[f.span+1]:off[f.span+2]]
			for j := len(ck) - 1; j >= 0; j-- {
				stack = append(stack, frame{ck[j], f.depth + 1})
			}
		}
	}
	visit(kids[off[0]:off[1]])
	for i := range spans {
		if !visited[i] {
			visit([]int32{int32(i)})
		}
	}
	// Apply the permutation old→newIdx in place by following its cycles.
	for i := range spans {
		for int(newIdx[i]) != i {
			j := newIdx[i]
			spans[i], spans[j] = spans[j], spans[i]
			newIdx[i], newIdx[j] = newIdx[j], newIdx[i]
		}
	}
	t.Spans = spans
	for s := range services {
		t.Services = append(t.Services, s)
	}
	slices.Sort(t.Services)
	return t
}
