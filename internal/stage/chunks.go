package stage

import "github.com/otelbench/otelbench/internal/tracechunk"

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
func (ch *chunker) link(spans []SpanRow) {
	if ch.trace == nil {
		ch.trace = map[string]int32{}
	}
	clear(ch.trace)
	ch.head, ch.tail, ch.next = ch.head[:0], ch.tail[:0], ch.next[:0]
	for i := range spans {
		tid := spans[i].TraceID
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
	TraceID                    string
	First, Last, Count, Errors int64
	Off, End                   int
}

// maxChunkBuf bounds the packed-chunk buffer a stage keeps between slices: one huge trace's
// spans do not stay in the heap for good.
const maxChunkBuf = 4 << 20

// packChunks packs the staged spans per trace, one chunkRow each, so that the projector's
// committing thread only inserts them (writeTraceChunks). It runs where the slice is staged:
// on the stager while catching up, in step with the committing thread's previous slice.
func (st *Stage) packChunks() {
	st.Chunks = st.Chunks[:0]
	if cap(st.ChunkBuf) > maxChunkBuf {
		st.ChunkBuf = nil
	}
	st.ChunkBuf = st.ChunkBuf[:0]
	if len(st.Spans) == 0 {
		return
	}
	ch := &st.chunker
	ch.link(st.Spans)
	out := st.ChunkBuf
	for _, head := range ch.head {
		first := &st.Spans[head]
		row := chunkRow{First: first.ID}
		row.TraceID = first.TraceID
		ch.enc.Begin(first.Start)
		for i := head; i >= 0; i = ch.next[i] {
			s := &st.Spans[i]
			row.Last = s.ID
			row.Count++
			if s.StatusCode == tracechunk.StatusError {
				row.Errors++
			}
			res := &st.Resources[s.Res]
			svc, _ := res.Service.(string)
			ch.enc.Add(&tracechunk.Span{SpanID: s.SpanID, ParentID: s.Parent, Start: s.Start, End: s.End,
				Kind: s.Kind, Status: s.StatusCode, Service: svc, Name: s.Name, StatusMessage: s.StatusMsg,
				Attributes: s.Attrs, Resource: res.Hash})
		}
		row.Off = len(out)
		out = ch.enc.Append(out)
		row.End = len(out)
		st.Chunks = append(st.Chunks, row)
	}
	st.ChunkBuf = out
	ch.enc.Trim()
}
