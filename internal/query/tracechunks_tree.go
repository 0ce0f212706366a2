package query

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/otelbench/otelbench/internal/hexid"
	"github.com/otelbench/otelbench/internal/tracechunk"
)

// traceBufs is the working memory of one fetch from trace_chunks: the
// chunks and every column of the decoded spans and of their tree. None of
// it holds a pointer, so the GC never scans it, and it is reused across
// fetches (traceBufKeeper) instead of being allocated and zeroed for each.
type traceBufs struct {
	arena  []byte      // the chunks, back to back
	chunks []chunkInfo // where each chunk and its spans go

	// Columns, one entry per span in spans.id order ("span i").
	ids, parents []uint64
	start, end   []int64
	text         []tracechunk.Text

	table      []int32 // parentIndexes' open-addressing table
	parent     []int32 // position of span i's parent; -1 root (after buildTree)
	childCount []int32 // [i+1]: children of span i; [0]: roots
	off        []int32 // CSR: the children of span i are kids[off[i+1]:off[i+2]]
	fill       []int32
	kids       []int32
	pos        []int32 // pre-order position of span i; -1 while unvisited
	stack      []treeFrame
	seen       []uint32 // service offsets already counted in the current chunk

	// The tree, by pre-order position k.
	order     []int32 // span at position k
	depth     []int32
	parentPos []int32 // position of the parent; -1 for a root or an orphan
}

type treeFrame struct{ span, depth int32 }

// The buffers of the last fetch are kept for the next one, unless they
// exceed maxKeptTraceBytes: those of a 161,000-span trace (~40 MB) are
// kept, those of a bigger trace go to the GC so that one huge trace does
// not pin its memory. They are dropped after keptTraceIdle without a
// fetch. (A sync.Pool loses them: the ~20 MB the SQLite driver allocates
// per fetch for the blobs triggers GC cycles, and two cycles empty a pool.)
const (
	maxKeptTraceBytes = 64 << 20
	keptTraceIdle     = 30 * time.Second
)

// traceBufKeeper holds at most one idle traceBufs. It is package state,
// like a sync.Pool: scratch memory shared by every Reader.
var traceBufKeeper bufKeeper

type bufKeeper struct {
	mu    sync.Mutex
	b     *traceBufs
	timer *time.Timer // drops b after keptTraceIdle
}

func getTraceBufs() *traceBufs {
	k := &traceBufKeeper
	k.mu.Lock()
	b := k.b
	k.b = nil
	k.mu.Unlock()
	if b == nil {
		b = new(traceBufs)
	}
	return b
}

// release returns b for the next fetch if it is not too big.
func (b *traceBufs) release() {
	if b.bytes() > maxKeptTraceBytes {
		return
	}
	b.arena, b.chunks = b.arena[:0], b.chunks[:0]
	b.ids, b.parents, b.start, b.end, b.text = b.ids[:0], b.parents[:0], b.start[:0], b.end[:0], b.text[:0]
	k := &traceBufKeeper
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.b != nil && k.b.bytes() > b.bytes() {
		return // keep the bigger one (a concurrent fetch's)
	}
	k.b = b
	if k.timer == nil {
		k.timer = time.AfterFunc(keptTraceIdle, k.drop)
	} else {
		k.timer.Reset(keptTraceIdle)
	}
}

func (k *bufKeeper) drop() {
	k.mu.Lock()
	k.b = nil
	k.mu.Unlock()
}

// bytes is the memory b holds.
func (b *traceBufs) bytes() int {
	return cap(b.arena) + int(unsafe.Sizeof(chunkInfo{}))*cap(b.chunks) +
		8*(cap(b.ids)+cap(b.parents)+cap(b.start)+cap(b.end)) +
		int(unsafe.Sizeof(tracechunk.Text{}))*cap(b.text) + 8*cap(b.stack) +
		4*(cap(b.table)+cap(b.parent)+cap(b.childCount)+cap(b.off)+cap(b.fill)+cap(b.kids)+cap(b.pos)+
			cap(b.order)+cap(b.depth)+cap(b.parentPos)+cap(b.seen))
}

// str returns the bytes of r in the arena.
func (b *traceBufs) str(r tracechunk.Ref) []byte { return b.arena[r.Off : r.Off+r.N] }

// orphan marks a span whose parent is not in the trace (or is itself).
const orphan = -2

// buildTree orders the decoded spans into a tree (the same order, depths
// and parents as the reference BuildTree the tests hold it to), filling t's summary fields and b's pre-order
// columns. b.parent must hold parentIndexes' result.
func (b *traceBufs) buildTree(t *TraceTree) {
	n := len(b.ids)
	t.SpanCount = n
	parent := b.parent
	childCount := grow(b.childCount, n+1)
	clear(childCount)
	b.childCount = childCount
	b.services(t)
	t.StartTimeUnixNano, t.EndTimeUnixNano = b.start[0], b.end[0]
	for i := range n {
		p := parent[i]
		if p == orphan {
			p = -1
			parent[i] = -1
			t.Orphans++
		}
		childCount[p+1]++
		t.StartTimeUnixNano = min(t.StartTimeUnixNano, b.start[i])
		t.EndTimeUnixNano = max(t.EndTimeUnixNano, b.end[i])
		t.Error = t.Error || b.text[i].Status == StatusError
	}
	t.DurationNano = t.EndTimeUnixNano - t.StartTimeUnixNano
	// Children in CSR form by counting sort: slot 0 holds the roots.
	off := grow(b.off, n+2)
	b.off = off
	off[0] = 0
	for i := 0; i <= n; i++ {
		off[i+1] = off[i] + childCount[i]
	}
	kids := grow(b.kids, n)
	b.kids = kids
	fill := grow(b.fill, n+1)
	b.fill = fill
	copy(fill, off[:n+1])
	for i := range n {
		k := parent[i] + 1
		kids[fill[k]] = int32(i)
		fill[k]++
	}
	start := b.start
	for k := 0; k <= n; k++ {
		ck := kids[off[k]:off[k+1]]
		// Kids are in index order; many lists are already sorted by start.
		sorted := true
		for j := 1; j < len(ck); j++ {
			if start[ck[j]] < start[ck[j-1]] {
				sorted = false
				break
			}
		}
		switch {
		case sorted:
		case len(ck) <= smallSort:
			sortKidsSmall(ck, start)
		default:
			slices.SortFunc(ck, func(a, b int32) int {
				return cmp.Or(cmp.Compare(start[a], start[b]), cmp.Compare(a, b))
			})
		}
	}
	b.preorder(t)
}

// smallSort is the longest child list sortKidsSmall sorts.
const smallSort = 32

// sortKidsSmall sorts a short child list by start time, ties in index
// order, by insertion sort on a local copy of the keys: a trace whose
// children arrive out of start order (fan-out 8, as querygen's) spent half
// of buildTree in slices.SortFunc's comparator calls. The list is in index
// order, and the sort is stable, so comparing the start times suffices.
func sortKidsSmall(ck []int32, start []int64) {
	var keys [smallSort]int64
	for j, x := range ck {
		keys[j] = start[x]
	}
	for j := 1; j < len(ck); j++ {
		key, x := keys[j], ck[j]
		m := j
		for m > 0 && keys[m-1] > key {
			keys[m], ck[m] = keys[m-1], ck[m-1]
			m--
		}
		keys[m], ck[m] = key, x
	}
}

// preorder runs the iterative DFS: a 100,000-deep chain costs no
// recursion. A cycle (a→b→a, no root) leaves spans unvisited; they are
// visited afterwards as extra roots.
func (b *traceBufs) preorder(t *TraceTree) {
	n := len(b.ids)
	parent, kids, off := b.parent, b.kids, b.off
	pos := grow(b.pos, n)
	b.pos = pos
	for i := range pos {
		pos[i] = -1
	}
	order := grow(b.order, n)
	depth := grow(b.depth, n)
	parentPos := grow(b.parentPos, n)
	b.order, b.depth, b.parentPos = order, depth, parentPos
	next := int32(0)
	stack := b.stack[:0]
	visit := func(rootKids []int32) {
		for j := len(rootKids) - 1; j >= 0; j-- {
			stack = append(stack, treeFrame{rootKids[j], 0})
		}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			i := f.span
			if pos[i] >= 0 {
				continue
			}
			order[next], depth[next], parentPos[next] = i, f.depth, -1
			if p := parent[i]; p >= 0 && pos[p] >= 0 {
				parentPos[next] = pos[p]
			} else {
				t.Roots = append(t.Roots, int(next))
			}
			t.MaxDepth = max(t.MaxDepth, int(f.depth))
			pos[i] = next
			next++
			ck := kids[off[i+1]:off[i+2]]
			for j := len(ck) - 1; j >= 0; j-- {
				stack = append(stack, treeFrame{ck[j], f.depth + 1})
			}
		}
	}
	visit(kids[off[0]:off[1]])
	for i := range n {
		if pos[i] < 0 {
			visit([]int32{int32(i)})
		}
	}
	b.stack = stack
}

// services sets t.Services: the sorted distinct services. A service is one
// string-table entry of a chunk, so within a chunk its arena offset
// identifies it without hashing the text.
func (b *traceBufs) services(t *TraceTree) {
	set := map[string]struct{}{}
	seen := b.seen[:0]
	i := 0
	for _, c := range b.chunks {
		seen = seen[:0]
		for end := i + c.spans; i < end; i++ {
			r := b.text[i].Str[strService]
			if slices.Contains(seen, r.Off) {
				continue
			}
			if len(seen) < 64 {
				seen = append(seen, r.Off)
			}
			s := b.str(r)
			if _, ok := set[string(s)]; !ok {
				set[strings.Clone(string(s))] = struct{}{}
			}
		}
	}
	b.seen = seen
	t.Services = make([]string, 0, len(set))
	for s := range set {
		t.Services = append(t.Services, s)
	}
	slices.Sort(t.Services)
}

// traceView is a built trace over pooled compact columns: what the API
// streams as JSON without materialising a Span. release returns its
// buffers; the view must not be used after.
type traceView struct {
	tree      TraceTree // the summary; Spans is nil
	b         *traceBufs
	resources []RawJSON // by the spans' Text.Resource: their resource's attributes, "" if none
	resJSON   [][]byte  // the same as each span's JSON field, `,"resource":{...}` or empty
}

func (v *traceView) release() {
	if v.b != nil {
		v.b.release()
		v.b = nil
	}
}

// materialize returns the view as a TraceTree with its Spans in pre-order.
// The tree shares no memory with the view's buffers: the chunks are copied
// into one string, which the spans' strings point into.
func (v *traceView) materialize() *TraceTree {
	b := v.b
	t := v.tree
	n := len(b.order)
	arena := string(b.arena)
	str := func(r tracechunk.Ref) string { return arena[r.Off : r.Off+r.N] }
	// All span and parent ids as hex in one buffer, sliced per span; it is
	// complete and never written again, so it is viewed as a string.
	hexBuf := make([]byte, 32*n)
	for k, i := range b.order {
		hexid.Put64(hexBuf[32*k:32*k+16], b.ids[i])
		hexid.Put64(hexBuf[32*k+16:32*k+32], b.parents[i])
	}
	hex := unsafe.String(unsafe.SliceData(hexBuf), len(hexBuf))
	spans := make([]Span, n)
	for k, i := range b.order {
		tx := &b.text[i]
		s := &spans[k]
		*s = Span{SpanID: hex[32*k : 32*k+16], Parent: int(b.parentPos[k]), Depth: int(b.depth[k]),
			Children: int(b.childCount[i+1]), Service: str(tx.Str[strService]), Name: str(tx.Str[strName]),
			Kind: tx.Kind, StartTimeUnixNano: b.start[i], EndTimeUnixNano: b.end[i],
			StatusCode: tx.Status, StatusMessage: str(tx.Str[strStatusMessage]),
			Attributes: RawJSON(str(tx.Str[strAttributes])), Resource: v.resources[tx.Resource]}
		if b.parents[i] != 0 {
			s.ParentSpanID = hex[32*k+16 : 32*k+32]
		}
	}
	t.Spans = spans
	return &t
}
