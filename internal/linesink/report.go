package linesink

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// StreamStats is the accounting of one stream (or of all, as totals).
//
// Missing = Written - Distinct: the lines written that never arrived.
// Received = Distinct + Duplicates + Beyond.
type StreamStats struct {
	Stream     int   `json:"stream"`
	Written    int64 `json:"written"`
	Received   int64 `json:"received"`
	Distinct   int64 `json:"distinct"`
	Missing    int64 `json:"missing"`
	Duplicates int64 `json:"duplicates"`
	OutOfOrder int64 `json:"out_of_order"`
	// Beyond counts distinct lines with a sequence number the writer never
	// wrote (a corrupted or foreign line of a known stream).
	Beyond    int64               `json:"beyond"`
	Latency   loadgen.Percentiles `json:"latency_ms"`
	Histogram *loadgen.Histogram  `json:"histogram"`
}

// Result is the accounting of a run against what was written.
type Result struct {
	Requests int64 `json:"requests"`
	// Unparseable counts records whose body held no pipeline line.
	Unparseable int64 `json:"unparseable"`
	// Foreign counts lines of a stream the writer did not have.
	Foreign int64         `json:"foreign"`
	Totals  StreamStats   `json:"totals"`
	Streams []StreamStats `json:"streams"`
}

// Result compares what was received with written[i], the lines stream i
// wrote (sequence numbers 0 .. written[i]-1). Lines of streams past
// len(written) count as foreign.
func (a *Accounting) Result(written []int64) (*Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := &Result{Requests: a.requests, Unparseable: a.unparseable, Foreign: a.foreign, Totals: StreamStats{Stream: -1}}
	total := loadgen.NewHistogram()
	for i, w := range written {
		st := StreamStats{Stream: i, Written: w}
		h := loadgen.NewHistogram()
		if i < len(a.streams) {
			s := a.streams[i]
			st.Received, st.Duplicates, st.OutOfOrder = s.received, s.duplicates, s.outOfOrder
			st.Distinct = s.distinctBelow(w)
			st.Beyond = s.distinct - st.Distinct
			h = s.hist
		}
		st.Missing = w - st.Distinct
		if err := finish(&st, h); err != nil {
			return nil, err
		}
		total.Merge(h)
		r.Streams = append(r.Streams, st)
		t := &r.Totals
		t.Written += st.Written
		t.Received += st.Received
		t.Distinct += st.Distinct
		t.Missing += st.Missing
		t.Duplicates += st.Duplicates
		t.OutOfOrder += st.OutOfOrder
		t.Beyond += st.Beyond
	}
	for i := len(written); i < len(a.streams); i++ {
		r.Foreign += a.streams[i].received
	}
	if err := finish(&r.Totals, total); err != nil {
		return nil, err
	}
	return r, nil
}

func finish(st *StreamStats, h *hdrhistogram.Histogram) error {
	st.Latency = loadgen.PercentilesOf(h)
	var err error
	if st.Histogram, err = loadgen.EncodeHistogram(h); err != nil {
		return fmt.Errorf("stream %d: %w", st.Stream, err)
	}
	return nil
}
