package store

import (
	"fmt"

	"github.com/otelbench/otelbench/internal/sqlitec"
	"github.com/otelbench/otelbench/internal/tracechunk"
)

// chunker groups a slice's spans by trace and packs each trace (stage.packChunks). Its buffers
// are reused across slices; only the packed output (stage.chunkBuf) grows with the slice, the
// rest with its largest trace.
type chunker struct {
	trace      map[string]int32 // trace id → index in first-span order
	head, tail []int32          // per trace, its first and last span
	next       []int32          // per span, the next span of its trace (-1: none)
	enc        tracechunk.Encoder
}

// link groups spans by trace: after it, head lists the traces in first-span order and next
// chains each trace's spans in id order.
func (ch *chunker) link(spans []spanRow) {
	if ch.trace == nil {
		ch.trace = map[string]int32{}
	}
	clear(ch.trace)
	ch.head, ch.tail, ch.next = ch.head[:0], ch.tail[:0], ch.next[:0]
	for i := range spans {
		tid := spans[i].traceID
		ch.next = append(ch.next, -1)
		t, ok := ch.trace[tid]
		if !ok {
			t = int32(len(ch.head))
			ch.trace[tid] = t
			ch.head, ch.tail = append(ch.head, int32(i)), append(ch.tail, int32(i))
			continue
		}
		ch.next[ch.tail[t]], ch.tail[t] = int32(i), int32(i)
	}
}

// chunkRow is one trace_chunks row of a slice: the spans of one trace, packed by the stager
// (stage.packChunks) into stage.chunkBuf[off:end].
type chunkRow struct {
	traceID                    string
	first, last, count, errors int64
	off, end                   int
}

// maxChunkBuf bounds the packed-chunk buffer a stage keeps between slices: one huge trace's
// spans do not stay in the heap for good.
const maxChunkBuf = 4 << 20

// packChunks packs the staged spans per trace, one chunkRow each, so that the projector's
// committing thread only inserts them (writeTraceChunks). It runs where the slice is staged:
// on the stager while catching up, in step with the committing thread's previous slice.
func (st *stage) packChunks() {
	st.chunks = st.chunks[:0]
	if cap(st.chunkBuf) > maxChunkBuf {
		st.chunkBuf = nil
	}
	st.chunkBuf = st.chunkBuf[:0]
	if len(st.spans) == 0 {
		return
	}
	ch := &st.chunker
	ch.link(st.spans)
	out := st.chunkBuf
	for _, head := range ch.head {
		first := &st.spans[head]
		row := chunkRow{first: first.id}
		row.traceID = first.traceID
		ch.enc.Begin(first.start)
		for i := head; i >= 0; i = ch.next[i] {
			s := &st.spans[i]
			row.last = s.id
			row.count++
			if s.statusCode == tracechunk.StatusError {
				row.errors++
			}
			svc, _ := st.resources[s.res].service.(string)
			ch.enc.Add(s.spanID, s.parent, s.start, s.end, s.kind, s.statusCode, svc, s.name, s.statusMsg, s.attrs)
		}
		row.off = len(out)
		out = ch.enc.Append(out)
		row.end = len(out)
		st.chunks = append(st.chunks, row)
	}
	st.chunkBuf = out
	ch.enc.Trim()
}

// writeTraceChunks inserts the slice's packed chunks (packChunks), one trace_chunks row per
// trace, in the slice's transaction. The rows' blobs stay in the stage's buffer until the next
// slice is staged into it, after the bulk flushes that copy them.
func (p *projector) writeTraceChunks() error {
	st := &p.stage
	for _, c := range st.chunks {
		if err := p.ins.chunks.add(sqlitec.Text(c.traceID), sqlitec.Int(c.first), sqlitec.Int(c.last), sqlitec.Int(c.count),
			sqlitec.Int(c.errors), sqlitec.Blob(st.chunkBuf[c.off:c.end:c.end])); err != nil {
			return fmt.Errorf("insert trace chunks: %w", err)
		}
	}
	return nil
}
