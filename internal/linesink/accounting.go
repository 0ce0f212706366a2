package linesink

import (
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/logline"
)

// Bounds of what the sink tracks: a line claiming a stream or sequence
// number past them counts as foreign (it cannot have come from the writer,
// whose runs are bounded by logwriter.MaxLines and its file count).
const (
	MaxStreams = 10000
	MaxSeq     = 100_000_000
)

// streamAcct is the accounting of one stream.
type streamAcct struct {
	seen       []uint64 // bit per sequence number
	maxSeq     int64
	received   int64
	distinct   int64
	duplicates int64
	outOfOrder int64
	hist       *hdrhistogram.Histogram
}

func newStreamAcct() *streamAcct {
	return &streamAcct{maxSeq: -1, hist: loadgen.NewHistogram()}
}

// add accounts for one line received at now.
func (s *streamAcct) add(l logline.Line, now int64) {
	s.received++
	w, b := l.Seq/64, uint64(1)<<(l.Seq%64)
	if int(w) >= len(s.seen) {
		s.seen = slices.Grow(s.seen, int(w)+1-len(s.seen))[:w+1]
	}
	if s.seen[w]&b != 0 {
		s.duplicates++
		return
	}
	s.seen[w] |= b
	s.distinct++
	if l.Seq < s.maxSeq {
		s.outOfOrder++
	} else {
		s.maxSeq = l.Seq
	}
	loadgen.RecordLatency(s.hist, time.Duration(now-l.TimeNs))
}

// distinctBelow counts the distinct sequence numbers below n.
func (s *streamAcct) distinctBelow(n int64) int64 {
	var c int64
	full := min(int(n/64), len(s.seen))
	for _, w := range s.seen[:full] {
		c += int64(bits.OnesCount64(w))
	}
	if rem := n % 64; rem != 0 && full < len(s.seen) {
		c += int64(bits.OnesCount64(s.seen[full] & (1<<rem - 1)))
	}
	return c
}

// Accounting counts the lines of every stream. It is safe for concurrent
// use; the zero value is not: use NewAccounting.
type Accounting struct {
	mu          sync.Mutex
	streams     []*streamAcct
	unparseable int64
	foreign     int64
	requests    int64

	// Live figures for progress and drain, readable without the lock.
	liveRecords  atomic.Int64
	liveDistinct atomic.Int64
}

// NewAccounting returns an empty Accounting.
func NewAccounting() *Accounting { return &Accounting{} }

// batch is the parse result of one request, accounted under one lock.
type batch struct {
	lines       []logline.Line
	unparseable int64
	foreign     int64
}

func (b *batch) offer(body []byte) bool {
	if body == nil {
		b.unparseable++
		return true
	}
	l, err := logline.Parse(body)
	if err != nil {
		return false
	}
	if l.Stream >= MaxStreams || l.Seq >= MaxSeq {
		b.foreign++
		return true
	}
	b.lines = append(b.lines, l)
	return true
}

// add accounts for the lines of one request, received at now.
func (a *Accounting) add(b *batch, now time.Time) {
	ns := now.UnixNano()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests++
	a.unparseable += b.unparseable
	a.foreign += b.foreign
	var distinct int64
	for _, l := range b.lines {
		for l.Stream >= len(a.streams) {
			a.streams = append(a.streams, newStreamAcct())
		}
		s := a.streams[l.Stream]
		before := s.distinct
		s.add(l, ns)
		distinct += s.distinct - before
	}
	a.liveRecords.Add(int64(len(b.lines)) + b.unparseable + b.foreign)
	a.liveDistinct.Add(distinct)
}

// Records returns the records received so far (every one, unparseable
// included).
func (a *Accounting) Records() int64 { return a.liveRecords.Load() }

// Distinct returns the distinct lines received so far, over all streams.
func (a *Accounting) Distinct() int64 { return a.liveDistinct.Load() }
