package rawlog

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/otelbench/otelbench/internal/seglog"
	"github.com/otelbench/otelbench/internal/signal"
)

// rawLog writes a raw log (seglog, SyncFull) holding one row per signal in sigs (ids from 1,
// records = id, payload = the id's byte repeated id times), of which only the first durable are
// durable: the fsync of the rest is held until the test ends.
func rawLog(t *testing.T, sigs []signal.Signal, durable int) *seglog.Log {
	t.Helper()
	l, err := seglog.Open(seglog.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	t.Cleanup(func() {
		close(release)
		l.Close()
	})
	for i, sig := range sigs {
		id := int64(i + 1)
		if int(id) == durable+1 {
			if err := l.WaitDurable(context.Background(), int64(durable)); err != nil {
				t.Fatal(err)
			}
			l.SetSyncHook(func() error { <-release; return nil })
		}
		payload := make([]byte, id)
		for j := range payload {
			payload[j] = byte(id)
		}
		if _, _, err := l.Write([]seglog.Entry{{Signal: sig, Records: int(id), Received: 1000 + id, Payload: payload}}); err != nil {
			t.Fatal(err)
		}
	}
	if durable >= len(sigs) {
		if err := l.WaitDurable(context.Background(), int64(len(sigs))); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// row is what the tests compare of a Row: its id, and whether its payload came with it.
type row struct {
	ID      int64
	Payload bool
}

func TestReaderRead(t *testing.T) {
	L, M, T := signal.Logs, signal.Metrics, signal.Traces
	sigs := []signal.Signal{L, M, T, L, M, L, T, L}
	tests := []struct {
		name    string
		filter  Filter
		after   int64
		durable int64
		lim     Limits
		want    []row
	}{
		{"every row", Filter{}, 0, 8, Limits{Rows: 100, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{1, true}, {2, true}, {3, true}, {4, true}, {5, true}, {6, true}, {7, true}, {8, true}}},
		{"after the mark", Filter{}, 5, 8, Limits{Rows: 100, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{6, true}, {7, true}, {8, true}}},
		{"only durable rows", Filter{}, 0, 3, Limits{Rows: 100, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{1, true}, {2, true}, {3, true}}},
		{"only traces: others without payload", Filter{Only: SignalsOf(T)}, 0, 8, Limits{Rows: 100, SkipFactor: 8, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{1, false}, {2, false}, {3, true}, {4, false}, {5, false}, {6, false}, {7, true}, {8, false}}},
		{"all but traces", Filter{Except: SignalsOf(T)}, 0, 8, Limits{Rows: 100, SkipFactor: 8, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{1, true}, {2, true}, {3, false}, {4, true}, {5, true}, {6, true}, {7, false}, {8, true}}},
		{"rows limit", Filter{}, 0, 8, Limits{Rows: 2, Records: 1 << 30, Bytes: 1 << 30},
			[]row{{1, true}, {2, true}}},
		// weights 1+1, 2+1, 3+1: past 5 after the third row, so the fourth ends the read.
		{"records limit", Filter{}, 0, 8, Limits{Rows: 100, Records: 5, Bytes: 1 << 30, RowWeight: 1},
			[]row{{1, true}, {2, true}, {3, true}, {4, true}}},
		{"bytes limit", Filter{}, 0, 8, Limits{Rows: 100, Records: 1 << 30, Bytes: 2},
			[]row{{1, true}, {2, true}, {3, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := OpenReader(rawLog(t, sigs, int(tt.durable)), tt.filter)
			defer r.Close()
			var rows []Row
			if err := r.Read(&rows, tt.after, tt.lim); err != nil {
				t.Fatalf("Read: %v", err)
			}
			var got []row
			for _, rw := range rows {
				got = append(got, row{rw.ID, len(rw.Payload) > 0})
				if want := sigs[rw.ID-1]; rw.Signal != want || rw.Records != rw.ID || rw.Received != 1000+rw.ID {
					t.Errorf("row %d: signal %d, records %d, received %d; want %d, %d, %d", rw.ID, rw.Signal, rw.Records, rw.Received, want, rw.ID, 1000+rw.ID)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReaderAlloc: with Limits.Alloc, payloads land in the buffers it gives.
func TestReaderAlloc(t *testing.T) {
	r := OpenReader(rawLog(t, []signal.Signal{signal.Logs, signal.Logs}, 2), Filter{})
	defer r.Close()
	arena := make([]byte, 0, 64)
	var rows []Row
	err := r.Read(&rows, 0, Limits{Rows: 10, Records: 100, Bytes: 100, Alloc: func(n int) []byte {
		b := arena[len(arena) : len(arena) : len(arena)+n]
		arena = arena[:len(arena)+n]
		return b
	}})
	if err != nil {
		t.Fatal(err)
	}
	if string(arena) != "\x01\x02\x02" || len(rows) != 2 || string(rows[1].Payload) != "\x02\x02" {
		t.Errorf("arena %q, rows %d; want the payloads 01 0202 in the arena", arena, len(rows))
	}
}
