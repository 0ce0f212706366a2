package stage

// byteArena holds the bytes of one slice, in chunks it keeps from slice to slice while catching
// up (fill): the payloads of its raw rows (stage.payloads), allocated a row at a time ~43% of
// the bytes a mixed catch-up allocated, and the strings of its staged rows (stage.strs).
// Fixed chunks, not one buffer grown as needed, so that what it keeps is the slice's bytes and
// no more: a grown buffer's spare capacity and the arrays it outgrew held ~5 MB more at peak
// RSS.
type ByteArena struct {
	Chunks [][]byte // those before cur are full, or as full as they got
	cur    int
}

// arenaChunk is the size of an arena's chunks; a payload of more than a quarter of it gets a
// buffer of its own, so that no chunk's unused tail exceeds a quarter of it.
const ArenaChunk = 256 << 10

// alloc returns a buffer of length 0 and capacity n, valid until reset.
func (a *ByteArena) Alloc(n int) []byte {
	if n > ArenaChunk/4 {
		return make([]byte, 0, n)
	}
	for ; a.cur < len(a.Chunks); a.cur++ {
		if c := a.Chunks[a.cur]; cap(c)-len(c) >= n {
			a.Chunks[a.cur] = c[:len(c)+n]
			return c[len(c) : len(c) : len(c)+n]
		}
	}
	a.Chunks = append(a.Chunks, make([]byte, n, ArenaChunk))
	return a.Chunks[a.cur][:0:n]
}

// reset makes every chunk free again; the buffers alloc returned are reused from then on.
func (a *ByteArena) Reset() {
	for i := range a.Chunks {
		a.Chunks[i] = a.Chunks[i][:0]
	}
	a.cur = 0
}
