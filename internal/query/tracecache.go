package query

import (
	"container/list"
	"sync"
)

// DefaultTraceCacheMinSpans is the smallest trace worth caching: smaller
// ones rebuild in milliseconds.
const DefaultTraceCacheMinSpans = 10_000

// traceCache holds built trees of big traces, LRU, bounded in total spans.
// An entry is valid while the trace's min and max span row ids are
// unchanged: span rows only ever get higher ids, so a late span moves the
// max, and pruning moves the min. Checking both is two index seeks.
type traceCache struct {
	mu       sync.Mutex
	minSpans int // traces smaller than this are not cached
	maxSpans int
	held     int
	lru      *list.List // of *traceEntry, front = most recent
	byID     map[string]*list.Element
}

type traceEntry struct {
	id         string
	minID, max int64
	tree       *TraceTree
}

func newTraceCache(maxSpans int) *traceCache {
	return &traceCache{minSpans: DefaultTraceCacheMinSpans, maxSpans: maxSpans, lru: list.New(), byID: map[string]*list.Element{}}
}

// get returns the cached tree of id if it was built from the same id range.
func (c *traceCache) get(id string, minID, maxID int64) *TraceTree {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil
	}
	e := el.Value.(*traceEntry)
	if e.minID != minID || e.max != maxID {
		c.remove(el)
		return nil
	}
	c.lru.MoveToFront(el)
	return e.tree
}

// wants reports whether a tree of n spans would be cached.
func (c *traceCache) wants(n int) bool {
	return c != nil && n >= c.minSpans && n <= c.maxSpans
}

func (c *traceCache) put(id string, minID, maxID int64, t *TraceTree) {
	if !c.wants(t.SpanCount) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
	for c.held+t.SpanCount > c.maxSpans && c.lru.Len() > 0 {
		c.remove(c.lru.Back())
	}
	c.byID[id] = c.lru.PushFront(&traceEntry{id: id, minID: minID, max: maxID, tree: t})
	c.held += t.SpanCount
}

func (c *traceCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*traceEntry)
	delete(c.byID, e.id)
	c.held -= e.tree.SpanCount
}
