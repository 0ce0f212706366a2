package seglog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/crashtest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/validtest"
)

func TestMain(m *testing.M) {
	crashtest.RunChild(crashChildEnv, runCrashChild)
	goleak.VerifyTestMain(m)
}

// payloadOf is record id's payload: its id and a size that varies with it, so a misplaced
// or truncated payload shows.
func payloadOf(id int64) []byte {
	head := fmt.Sprintf("payload-%d-", id)
	return append([]byte(head), bytes.Repeat([]byte{byte(id)}, int(id%97)*13)...)
}

func sigOf(id int64) signal.Signal { return signal.All()[id%signal.Count] }

func entryOf(id int64) Entry {
	return Entry{Signal: sigOf(id), Records: int(id%5) + 1, Received: 1e18 + id, Payload: payloadOf(id)}
}

func openLog(t testing.TB, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// appendN writes records from..to (inclusive ids expected) in groups of group and waits for them.
func appendN(t testing.TB, l *Log, from, to int64, group int) {
	t.Helper()
	var batch []Entry
	for id := from; id <= to; id++ {
		batch = append(batch, entryOf(id))
		if len(batch) == group || id == to {
			first, last, err := l.Write(batch)
			if err != nil {
				t.Fatalf("write ids from %d: %v", first, err)
			}
			if want := id - int64(len(batch)) + 1; first != want || last != id {
				t.Fatalf("write: got ids %d..%d, want %d..%d", first, last, want, id)
			}
			batch = batch[:0]
		}
	}
	if err := l.WaitDurable(context.Background(), to); err != nil {
		t.Fatalf("wait durable %d: %v", to, err)
	}
}

// checkRows reads every row after after with lim and checks they are exactly ids from..to, intact.
func checkRows(t testing.TB, l *Log, after int64, lim Limits, from, to int64) {
	t.Helper()
	r := l.NewReader()
	defer r.Close()
	want := from
	var rows []Row
	for {
		var through int64
		var err error
		rows, through, err = r.Read(after, lim, rows)
		if err != nil {
			t.Fatalf("read after %d: %v", after, err)
		}
		if through == after {
			break
		}
		for _, row := range rows {
			for lim.Signal != 0 && sigOf(want) != lim.Signal {
				want++
			}
			if row.ID != want {
				t.Fatalf("read after %d: got id %d, want %d", after, row.ID, want)
			}
			e := entryOf(want)
			if !bytes.Equal(row.Payload, e.Payload) || row.Signal != e.Signal || row.Records != e.Records || row.Received != e.Received {
				t.Fatalf("row %d: got %v/%d/%d/%q, want %v/%d/%d/%q", want, row.Signal, row.Records, row.Received, row.Payload, e.Signal, e.Records, e.Received, e.Payload)
			}
			want++
		}
		if lim.Rows > 0 && len(rows) > lim.Rows {
			t.Fatalf("read: got %d rows, want at most %d", len(rows), lim.Rows)
		}
		weight := 0
		for _, row := range rows {
			weight += row.Records + lim.RowWeight
		}
		if lim.Records > 0 && len(rows) > 1 && weight > lim.Records {
			t.Fatalf("read: got %d rows weighing %d, want at most %d (or one row)", len(rows), weight, lim.Records)
		}
		after = through
	}
	for lim.Signal != 0 && want <= to && sigOf(want) != lim.Signal {
		want++
	}
	if want != to+1 {
		t.Fatalf("read: got rows through %d, want through %d", want-1, to)
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		group int
		n     int64
	}{
		{"one segment", Config{}, 1, 50},
		{"rolls every few records", Config{SegmentBytes: 4 << 10}, 1, 400},
		{"groups across rolls", Config{SegmentBytes: 8 << 10, IndexRecords: 3}, 16, 600},
		{"dense index", Config{SegmentBytes: 64 << 10, IndexBytes: 512}, 7, 500},
		{"sync normal", Config{SegmentBytes: 4 << 10, Sync: SyncNormal}, 5, 300},
		{"sync off", Config{SegmentBytes: 4 << 10, Sync: SyncOff}, 5, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Dir = t.TempDir()
			l := openLog(t, cfg)
			appendN(t, l, 1, tt.n, tt.group)
			check := func(l *Log, to int64) {
				checkRows(t, l, 0, Limits{}, 1, to)
				checkRows(t, l, 0, Limits{Rows: 3}, 1, to)
				checkRows(t, l, 0, Limits{Records: 7, Signal: signal.Traces}, 1, to)
				checkRows(t, l, 0, Limits{Records: 20, RowWeight: 6}, 1, to)
				checkRows(t, l, 0, Limits{Bytes: 2000}, 1, to)
				for _, after := range []int64{1, to / 3, to / 2, to - 1} {
					checkRows(t, l, after, Limits{Rows: 10}, after+1, to)
				}
			}
			check(l, tt.n)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, cfg)
			defer l.Close()
			check(l, tt.n)
			appendN(t, l, tt.n+1, tt.n+40, tt.group)
			check(l, tt.n+40)
			st := l.Stats()
			if st.Requests != 40 || st.First != 1 || st.Durable != tt.n+40 {
				t.Errorf("stats: got requests %d first %d durable %d, want 40, 1, %d", st.Requests, st.First, st.Durable, tt.n+40)
			}
			if cfg.SegmentBytes > 0 && cfg.SegmentBytes <= 8<<10 && st.Segments < 3 {
				t.Errorf("segments: got %d, want several", st.Segments)
			}
		})
	}
}

func TestDeleteThrough(t *testing.T) {
	for _, tt := range []struct {
		name   string
		spares int // Config.Spares
		kept   int // spare files after deleting the first segment, and at most after that
	}{
		{"no spares", -1, 0},
		{"spares", 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Dir: t.TempDir(), SegmentBytes: 4 << 10, Spares: tt.spares}
			l := openLog(t, cfg)
			appendN(t, l, 1, 300, 4)
			segs := l.Segments()
			if len(segs) < 4 {
				t.Fatalf("segments: got %d, want at least 4", len(segs))
			}
			// Through the middle of the second segment: only the first goes.
			n, freed, err := l.DeleteThrough(segs[1].First + 1)
			wantFreed := segs[0].Bytes
			if tt.kept > 0 {
				wantFreed = 0 // kept as a spare
			}
			if err != nil || n != 1 || freed != wantFreed {
				t.Fatalf("delete: got %d segments %d bytes %v, want 1, %d, nil", n, freed, err, wantFreed)
			}
			if _, err := os.Stat(segs[0].Path); !os.IsNotExist(err) {
				t.Errorf("deleted segment: got stat error %v, want not exist", err)
			}
			if st := l.Stats(); st.Spares != tt.kept {
				t.Errorf("spares after deleting one segment: got %d, want %d", st.Spares, tt.kept)
			}
			checkDiskBytes(t, l, cfg.Dir)
			checkRows(t, l, 0, Limits{}, segs[1].First, 300)
			// Everything, the active segment included.
			if _, _, err := l.DeleteThrough(300); err != nil {
				t.Fatal(err)
			}
			st := l.Stats()
			if st.Segments != 1 || st.First != 0 || st.Spares > max(tt.spares, 0) {
				t.Errorf("after deleting all: got %d segments, first %d, %d spares, want 1, 0, at most %d", st.Segments, st.First, st.Spares, max(tt.spares, 0))
			}
			checkDiskBytes(t, l, cfg.Dir)
			checkRows(t, l, 0, Limits{}, 301, 300)
			l.Close()
			l = openLog(t, cfg)
			defer l.Close()
			appendN(t, l, 301, 310, 3) // ids go on from 301, not 1
			checkRows(t, l, 0, Limits{}, 301, 310)
			checkDiskBytes(t, l, cfg.Dir)
		})
	}
}

// checkDiskBytes checks that Stats.DiskBytes is the size of every file in dir, spares
// included: a size bound computed from it must see them.
func checkDiskBytes(t *testing.T, l *Log, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		sum += fi.Size()
	}
	if got := l.Stats().DiskBytes; got != sum {
		t.Errorf("Stats.DiskBytes: got %d, want %d (the files in %s)", got, sum, dir)
	}
}

var tornCfg = Config{SegmentBytes: 4 << 10}

func TestFailedSyncIsFinal(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, Config{Dir: dir})
	appendN(t, l, 1, 3, 1)
	fail := func() error { return syscall.EIO }
	l.sy.beforeSync.Store(&fail)
	if _, _, err := l.Write([]Entry{entryOf(4)}); err != nil {
		t.Fatalf("write 4: %v", err)
	}
	if err := l.WaitDurable(context.Background(), 4); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("wait 4: got %v, want ErrSyncFailed", err)
	}
	l.sy.beforeSync.Store(nil) // the disk "recovers": the log must still refuse
	for i := range 3 {
		if _, _, err := l.Write([]Entry{entryOf(5)}); !errors.Is(err, ErrSyncFailed) {
			t.Fatalf("write after failure %d: got %v, want ErrSyncFailed", i, err)
		}
	}
	if got := l.Durable(); got != 3 {
		t.Errorf("durable: got %d, want 3", got)
	}
	if err := l.Failed(); !errors.Is(err, ErrSyncFailed) {
		t.Errorf("Failed: got %v, want ErrSyncFailed", err)
	}
	checkRows(t, l, 0, Limits{}, 1, 3)
	l.Close()
	l = openLog(t, Config{Dir: dir}) // reopening syncs and accepts again
	defer l.Close()
	appendN(t, l, 5, 6, 1)
}

func TestReaderStopsAtDurable(t *testing.T) {
	l := openLog(t, Config{Dir: t.TempDir()})
	defer l.Close()
	appendN(t, l, 1, 2, 1)
	hold, held := make(chan struct{}), make(chan struct{}, 1)
	hook := func() error { held <- struct{}{}; <-hold; return nil }
	l.sy.beforeSync.Store(&hook)
	if _, _, err := l.Write([]Entry{entryOf(3), entryOf(4)}); err != nil {
		t.Fatal(err)
	}
	<-held // the syncer is about to fsync 3 and 4
	r := l.NewReader()
	defer r.Close()
	rows, through, err := r.Read(0, Limits{}, nil)
	if err != nil || len(rows) != 2 || through != 2 {
		t.Fatalf("read while 3-4 are not durable: got %d rows through %d (%v), want 2 through 2", len(rows), through, err)
	}
	l.sy.beforeSync.Store(nil)
	close(hold)
	if err := l.WaitDurable(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	checkRows(t, l, 0, Limits{}, 1, 4)
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	l := openLog(t, Config{Dir: t.TempDir(), SegmentBytes: 16 << 10, IndexRecords: 8})
	const n = 3000
	var wg sync.WaitGroup
	wg.Go(func() { appendN(t, l, 1, n, 7) })
	for range 3 {
		wg.Go(func() {
			r := l.NewReader()
			defer r.Close()
			var after int64
			var rows []Row
			for after < n {
				var err error
				rows, after, err = r.Read(after, Limits{Rows: 50}, rows)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				if after > l.Durable() {
					t.Errorf("read through %d, beyond durable %d", after, l.Durable())
				}
				for _, row := range rows {
					if !bytes.Equal(row.Payload, payloadOf(row.ID)) {
						t.Errorf("row %d: payload differs", row.ID)
						return
					}
				}
			}
		})
	}
	wg.Go(func() { // retention racing the readers: deleting is safe while they read
		for l.Durable() < n/2 {
			l.DeleteThrough(l.Durable() / 4)
			time.Sleep(time.Millisecond)
		}
	})
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"defaults", Config{Dir: "x"}, nil},
		{"no dir", Config{}, validtest.Invalid},
		{"bad sync", Config{Dir: "x", Sync: "fast"}, validtest.Invalid},
		{"negative size", Config{Dir: "x", SegmentBytes: -1}, validtest.Invalid},
	})
}

// TestWriteAllocs: at steady state (buffers grown, no roll) Write allocates nothing per record.
func TestWriteAllocs(t *testing.T) {
	l := openLog(t, Config{Dir: t.TempDir(), Sync: SyncNormal})
	defer l.Close()
	batch := make([]Entry, 16)
	for i := range batch {
		batch[i] = entryOf(int64(i + 1))
	}
	if _, _, err := l.Write(batch); err != nil {
		t.Fatal(err)
	}
	got := testing.AllocsPerRun(100, func() {
		if _, _, err := l.Write(batch); err != nil {
			t.Fatal(err)
		}
	})
	if got > 0.1 { // an index entry's append may grow its slice now and then
		t.Errorf("allocations per Write of 16 records: got %.2f, want 0", got)
	}
}
