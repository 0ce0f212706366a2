package seglog

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/otelbench/otelbench/internal/signal"
)

// fixedEntry is record id's entry with a payload of a fixed size, so that records of two
// generations of one recycled file start at the same offsets: the case in which a stale
// record's header sits exactly where recovery looks for the next one.
func fixedEntry(id int64) Entry {
	p := bytes.Repeat([]byte{'.'}, 200)
	copy(p, fmt.Sprintf("fixed-%d-", id))
	return Entry{Signal: signal.Logs, Records: 1, Received: id, Payload: p}
}

func writeFixed(t *testing.T, l *Log, from, to int64) {
	t.Helper()
	for id := from; id <= to; id++ {
		if _, last, err := l.Write([]Entry{fixedEntry(id)}); err != nil || last != id {
			t.Fatalf("write %d: got id %d, %v", id, last, err)
		}
	}
	if err := l.WaitDurable(t.Context(), to); err != nil {
		t.Fatal(err)
	}
}

// checkFixed reads every row and checks they are ids from..to with fixedEntry's payloads.
func checkFixed(t *testing.T, l *Log, from, to int64) {
	t.Helper()
	checkPayloads(t, l, from, to, func(id int64, p []byte) bool { return bytes.Equal(p, fixedEntry(id).Payload) })
}

// checkPayloads reads every row and checks they are ids from..to, each payload passing ok.
func checkPayloads(t *testing.T, l *Log, from, to int64, ok func(id int64, payload []byte) bool) {
	t.Helper()
	r := l.NewReader()
	defer r.Close()
	want, after := from, int64(0)
	for {
		rows, through, err := r.Read(after, Limits{}, nil)
		if err != nil {
			t.Fatalf("read after %d: %v", after, err)
		}
		if len(rows) == 0 {
			break
		}
		for _, row := range rows {
			if row.ID != want || !ok(want, row.Payload) {
				t.Fatalf("row: got id %d payload %.30q, want id %d", row.ID, row.Payload, want)
			}
			want++
		}
		after = through
	}
	if want != to+1 {
		t.Fatalf("rows: got ids %d..%d, want %d..%d", from, want-1, from, to)
	}
}

// TestRecycledSegmentTail: a segment recycled from a spare holds the older generation's valid
// records after the new ones, at the very offsets where recovery looks for the next record.
// Whether the new tail ends cleanly, lost its end mark, or is torn, recovery stops at the last
// whole record of the new generation, never returns a stale one, and records written after
// recovery survive the next reopen with nothing stale revived.
func TestRecycledSegmentTail(t *testing.T) {
	const (
		per = 16               // records a segment: 16 × 232 B fill 4 KiB segments
		rec = headerSize + 200 // one record's bytes
		top = int64(3*per + 5) // the last id written
	)
	tests := []struct {
		name string
		// damage changes the active segment's bytes b, whose records end at end; stale is the
		// file's content in its older generation. It returns how many records it destroyed.
		damage func(b, stale []byte, end int64) (lost int64)
	}{
		{"clean", func(b, stale []byte, end int64) int64 { return 0 }},
		{"end mark lost", func(b, stale []byte, end int64) int64 {
			copy(b[end:end+headerSize], stale[end:]) // its page never reached the disk
			return 0
		}},
		{"last payload torn", func(b, stale []byte, end int64) int64 {
			b[end-10] ^= 0xff
			return 1
		}},
		{"last header torn", func(b, stale []byte, end int64) int64 {
			copy(b[end-rec:end-rec+headerSize], stale[end-rec:]) // the old record 5 is back
			return 1
		}},
		{"header before the last torn", func(b, stale []byte, end int64) int64 {
			// Power loss: the last record reached the disk, the page before it did not. That
			// record was never acknowledged, and must stay gone once the next write fills the
			// gap with a record of the same length.
			copy(b[end-2*rec:end-2*rec+headerSize], stale[end-2*rec:])
			return 2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Dir: t.TempDir(), SegmentBytes: fileHeaderSize + per*rec, Spares: 1}
			l := openLog(t, cfg)
			writeFixed(t, l, 1, 3*per) // segments from 1, 17 and 33; 33 is active
			stale, err := os.ReadFile(l.Segments()[0].Path)
			if err != nil {
				t.Fatal(err)
			}
			if n, _, err := l.DeleteThrough(per); err != nil || n != 1 {
				t.Fatalf("delete the first segment: got %d, %v; want 1, nil", n, err)
			}
			writeFixed(t, l, 3*per+1, top) // rolls into the spare: 49..53 are in it
			segs := l.Segments()
			active := segs[len(segs)-1]
			if st := l.Stats(); st.Spares != 0 || active.First != 3*per+1 {
				t.Fatalf("after the roll: got %d spares, active segment from %d; want 0, from %d", st.Spares, active.First, 3*per+1)
			}
			l.Close()
			b, err := os.ReadFile(active.Path)
			if err != nil {
				t.Fatal(err)
			}
			end := active.Bytes
			// The precondition: the older generation's records follow, whole, at the same offsets.
			if h, err := parseHeader(stale[end:]); err != nil || h.id != 6 || !bytes.Equal(b[end+headerSize:end+rec], stale[end+headerSize:end+rec]) {
				t.Fatalf("the recycled file does not hold old record 6 at offset %d (%d, %v)", end, h.id, err)
			}
			lost := tt.damage(b, stale, end)
			if err := os.WriteFile(active.Path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			last := top - lost
			l = openLog(t, cfg)
			if got := l.Durable(); got != last {
				t.Fatalf("durable after recovery: got %d, want %d", got, last)
			}
			checkFixed(t, l, per+1, last)
			recovered, err := os.ReadFile(active.Path)
			if err != nil {
				t.Fatal(err)
			}
			// A record of the same length lands exactly where the first lost one was; then
			// power is lost before its end mark's page reaches the disk.
			writeFixed(t, l, last+1, last+1)
			mark := l.Segments()[len(segs)-1].Bytes
			l.Close()
			f, err := os.OpenFile(active.Path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(recovered[mark:mark+headerSize], mark); err != nil {
				t.Fatal(err)
			}
			f.Close()
			l = openLog(t, cfg)
			defer l.Close()
			if got := l.Durable(); got != last+1 {
				t.Fatalf("durable after the second reopen: got %d, want %d (nothing stale revived)", got, last+1)
			}
			checkFixed(t, l, per+1, last+1)
		})
	}
}

// TestTornSegmentCreation: a roll's new segment whose file header never reached the disk (its
// fallocated size did) is written again at Open, and ids go on from the sealed segment's.
func TestTornSegmentCreation(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), SegmentBytes: fileHeaderSize + 4*(headerSize+200)}
	l := openLog(t, cfg)
	writeFixed(t, l, 1, 5) // the fifth record rolls into a second segment
	segs := l.Segments()
	if len(segs) != 2 {
		t.Fatalf("segments: got %d, want 2", len(segs))
	}
	l.Close()
	b, err := os.ReadFile(segs[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	clear(b) // neither the header nor the record reached the disk; the allocation did
	if err := os.WriteFile(segs[1].Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	if got := l.Durable(); got != 4 {
		t.Fatalf("durable: got %d, want 4", got)
	}
	writeFixed(t, l, 5, 6)
	checkFixed(t, l, 1, 6)
}
