package rawlog

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/signal"
)

// rawFile writes a raw.db holding one row per signal in sigs (ids from 1, records = id,
// payload = the id's byte repeated id times) and returns its path.
func rawFile(t *testing.T, sigs []signal.Signal) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := schema.Apply(context.Background(), db, schema.Raw); err != nil {
		t.Fatal(err)
	}
	for i, sig := range sigs {
		id := int64(i + 1)
		payload := make([]byte, id)
		for j := range payload {
			payload[j] = byte(id)
		}
		if _, err := db.Exec(`INSERT INTO raw(id, signal, records, received_unix_nano, payload) VALUES (?, ?, ?, ?, ?)`,
			id, int(sig), id, 1000+id, payload); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// row is what the tests compare of a Row: its id, and whether its payload came with it.
type row struct {
	ID      int64
	Payload bool
}

func TestReaderRead(t *testing.T) {
	L, M, T := signal.Logs, signal.Metrics, signal.Traces
	sigs := []signal.Signal{L, M, T, L, signal.Signal(9), L, T, L}
	path := rawFile(t, sigs)
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
		{"all but traces takes a damaged row", Filter{Except: SignalsOf(T)}, 0, 8, Limits{Rows: 100, SkipFactor: 8, Records: 1 << 30, Bytes: 1 << 30},
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
			var durable atomic.Int64
			durable.Store(tt.durable)
			r, err := OpenReader(path, tt.filter, &durable)
			if err != nil {
				t.Fatal(err)
			}
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
	path := rawFile(t, []signal.Signal{signal.Logs, signal.Logs})
	var durable atomic.Int64
	durable.Store(2)
	r, err := OpenReader(path, Filter{}, &durable)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	arena := make([]byte, 0, 64)
	var rows []Row
	err = r.Read(&rows, 0, Limits{Rows: 10, Records: 100, Bytes: 100, Alloc: func(n int) []byte {
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

// TestReaderPragmas: the reader's connection is read-only with a small cache and the common
// busy timeout.
func TestReaderPragmas(t *testing.T) {
	var durable atomic.Int64
	r, err := OpenReader(rawFile(t, nil), Filter{}, &durable)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, want := range map[string]int64{"query_only": 1, "cache_size": -256, "busy_timeout": 10000} {
		got, err := r.c.QueryInt64("PRAGMA " + name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: got %d, want %d", name, got, want)
		}
	}
}
