package project

import (
	"time"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/stage"
)

// prefetch is the slice after the one committing, read and staged on the stager (a worker, at
// normal priority) while the projector's thread commits: on 2 CPUs catch-up is bound by the one
// projector thread, and reading and decoding took ~16% of it. It is started only when the slice
// committing left raw rows behind and no group commit happened since the slice before (ingest
// idle), and it is always waited for (used, or dropped after a failed commit) before the
// projector reads the raw log itself. With two projectors (--traces-file) each prefetches: until fa4579a
// only the one-file layout did, on the grounds that the second CPU was
// taken, but once the stager read payloads without pdata the two-file catch-up without it was
// the slower one at one record a request (57k against 76k records/s) and with it the faster one
// after a mixed load (median 161k against 114k), for ~15 MB more peak RSS at serve's defaults
// (docs/benchmarks/store.md).
type prefetch struct {
	done    chan struct{}
	running bool
	rows    []rawlog.Row
	stage   slice
	readAt  time.Time
	n       int
	err     error
}

// fill reads the raw rows after raw id after into rows and stages the first n of them, as many
// as one slice takes, into st with log and span ids from nextLogID and nextSpanID. n < len(rows)
// means more rows are pending. With reuse (a prefetch: catching up) the payloads are read into
// st.payloads and the wire path's strings go to st.strs, else each has a buffer of its own and
// the arenas are let go: they are for catching up, when the slices follow one another.
func (p *projector) fill(rows *[]rawlog.Row, st *slice, readAt *time.Time, after, nextLogID, nextSpanID int64, reuse bool) (n int, err error) {
	limit, maxBytes := p.d.SliceRows, p.d.SliceBytes()
	*readAt = time.Now()
	var arena *stage.ByteArena
	if reuse {
		arena = &st.Payloads
		if st.Strs == nil {
			st.Strs = new(stage.ByteArena)
		}
		st.Strs.Reset()
	} else {
		st.Payloads, st.Strs = stage.ByteArena{}, nil
	}
	st.Wire.Strs = st.Strs
	if err := p.readRaw(rows, arena, after, limit+1, maxSliceRecords, maxBytes); err != nil {
		return 0, err
	}
	rs := *rows
	if len(rs) == 0 {
		return 0, nil
	}
	// Decode and stage outside the write lock: this is the CPU-heavy part. Rows of other
	// signals are passed over (another projector takes them).
	st.ResCache = &p.stageRes
	st.reset(nextLogID, nextSpanID)
	var own int
	var records, bytes int64
	for ; n < len(rs); n++ {
		r := &rs[n]
		if !p.d.Filter.Takes(r.Signal) {
			continue
		}
		if own == limit || own > 0 && (records+sliceWeight(r) > maxSliceRecords || bytes+int64(len(r.Payload)) > maxBytes) {
			break
		}
		own++
		if err := p.stageFirst(st, r); err != nil { // a huge row: its first window (window.go)
			p.failed(st, r, err) // kept, counted and logged, never lost silently (unprojectable.go)
		}
		records += sliceWeight(r)
		bytes += int64(len(r.Payload))
	}
	st.Pack()
	return n, nil
}

// startPrefetch reads and stages the slice after raw id after on the stager, a worker the
// projector starts with the first prefetch and stops in close. The stager runs at normal
// priority: a prefetch starts only while ingest is idle.
func (p *projector) startPrefetch(after, nextLogID, nextSpanID int64) {
	if p.next == nil {
		p.next = &prefetch{}
		p.stager = NewWorker(p.d.Counters.OffThreadCPU)
	}
	f := p.next
	f.done, f.running = make(chan struct{}), true
	p.d.Counters.Prefetches.Add(1)
	p.stager.Start(func() {
		defer close(f.done)
		f.n, f.err = p.fill(&f.rows, &f.stage, &f.readAt, after, nextLogID, nextSpanID, true)
	})
}

// waitPrefetch waits for a running prefetch and returns it, or returns nil when none runs.
func (p *projector) waitPrefetch() *prefetch {
	f := p.next
	if f == nil || !f.running {
		return nil
	}
	<-f.done
	f.running = false
	return f
}

// dropPrefetch waits for a running prefetch and forgets it. Every path that leaves p.hwm where
// it was (a failed commit, reset) drops it: its rows follow a slice that did not commit.
func (p *projector) dropPrefetch() {
	if f := p.waitPrefetch(); f != nil {
		clear(f.rows)
	}
}
