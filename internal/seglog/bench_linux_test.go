package seglog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/selfusage"
	"github.com/otelbench/otelbench/internal/signal"
)

// The payload sizes of 100- and 1,000-record OTLP log requests (docs/BENCHMARKS.md's bulk shapes).
var benchShapes = []struct {
	name  string
	bytes int
}{{"12KB", 12 << 10}, {"122KB", 122 << 10}}

// cpuMeter reports CPU-seconds (user+system, the whole process) per GB of payload.
type cpuMeter struct{ start time.Duration }

func newCPUMeter() cpuMeter {
	start, _ := selfusage.CPU() // Linux: it cannot fail
	return cpuMeter{start: start}
}

func (m *cpuMeter) report(b *testing.B, bytes int64) {
	now, _ := selfusage.CPU()
	cpu := now - m.start
	b.ReportMetric(cpu.Seconds()/(float64(bytes)/1e9), "cpu-s/GB")
}

func randomPayload(n int) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// BenchmarkAppend writes groups of group records with SyncFull on the test's temporary
// directory (a real disk, not tmpfs) the way a server's writer would: write a group, then wait
// for the previous group's fsync, so each fsync overlaps the next write. The "pruned" rows
// delete every sealed segment but the newest as they go, as serve's raw pruning does in steady
// state, so their rolls take spare segments ("recycled") or, with no spares kept, create new
// ones ("fallocated", "zero-filled"). max-write-ms is the longest Write after the third roll
// (before it no spare exists yet): a roll's stall.
func BenchmarkAppend(b *testing.B) {
	for _, sh := range benchShapes {
		for _, v := range []struct {
			name              string
			group             int
			growing, zeroFill bool
			prune             bool
			spares            int
		}{
			{"seglog", 1, false, false, false, 0}, {"seglog", 16, false, false, false, 0},
			{"seglog-growing", 1, true, false, false, 0}, {"seglog-growing", 16, true, false, false, 0},
			{"seglog-zero-filled", 16, false, true, false, 0},
			{"pruned-recycled", 16, false, false, true, 0}, {"pruned-fallocated", 16, false, false, true, -1},
			{"pruned-zero-filled", 16, false, true, true, -1},
		} {
			b.Run(fmt.Sprintf("%s/%s/group=%d", v.name, sh.name, v.group), func(b *testing.B) {
				l, err := Open(Config{Dir: b.TempDir(), growing: v.growing, zeroFill: v.zeroFill, Spares: v.spares})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				payload := randomPayload(sh.bytes)
				batch := make([]Entry, v.group)
				for i := range batch {
					batch[i] = Entry{Signal: signal.Logs, Records: 100, Payload: payload}
				}
				b.SetBytes(int64(sh.bytes * v.group))
				b.ReportAllocs()
				m := newCPUMeter()
				var prev, active int64
				var longest time.Duration
				rolls := 0
				for b.Loop() {
					start := time.Now()
					first, last, err := l.Write(batch)
					if err != nil {
						b.Fatal(err)
					}
					if rolls >= 3 { // the first rolls find no spare yet
						longest = max(longest, time.Since(start))
					}
					if s := l.locateFirst(first); s != active {
						active = s
						rolls++
					}
					if err := l.WaitDurable(context.Background(), prev); err != nil {
						b.Fatal(err)
					}
					prev = last
					if v.prune && l.Stats().Segments > 2 {
						segs := l.Segments()
						if _, _, err := l.DeleteThrough(segs[len(segs)-2].First - 1); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := l.WaitDurable(context.Background(), prev); err != nil {
					b.Fatal(err)
				}
				m.report(b, int64(b.N)*int64(sh.bytes*v.group))
				b.ReportMetric(float64(l.Stats().Syncs)/float64(b.N), "fsyncs/op")
				b.ReportMetric(float64(longest.Microseconds())/1e3, "max-write-ms")
			})
		}
	}
}

// locateFirst returns the first id of the segment holding id.
func (l *Log) locateFirst(id int64) int64 {
	s, _ := l.locate(id)
	return s.first
}

// BenchmarkOpen measures Open (recovery's scan and index rebuild) of a 1 GiB log of 12 KB
// records in 64 MiB segments, built once with SyncOff. The page cache is warm, as after a
// process restart; after a reboot the scan also reads the headers' pages from disk.
func BenchmarkOpen(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 1 GiB")
	}
	dir := b.TempDir()
	l, err := Open(Config{Dir: dir, Sync: SyncOff})
	if err != nil {
		b.Fatal(err)
	}
	payload := randomPayload(12 << 10)
	batch := make([]Entry, 64)
	for i := range batch {
		batch[i] = Entry{Signal: signal.Logs, Records: 100, Payload: payload}
	}
	for l.Stats().Bytes < 1<<30 {
		if _, _, err := l.Write(batch); err != nil {
			b.Fatal(err)
		}
	}
	st := l.Stats()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		l, err := Open(Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
	b.ReportMetric(float64(st.Requests), "records")
	b.ReportMetric(float64(st.Segments), "segments")
}

// BenchmarkRead reads a 256 MiB log of 12 KB records from start to end, 4 MiB a Read, as a
// projector would: pread into the Reader's buffer and a checksum of every payload.
func BenchmarkRead(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), Sync: SyncOff})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	payload := randomPayload(12 << 10)
	batch := make([]Entry, 64)
	for i := range batch {
		batch[i] = Entry{Signal: signal.Logs, Records: 100, Payload: payload}
	}
	for l.Stats().Bytes < 256<<20 {
		if _, _, err := l.Write(batch); err != nil {
			b.Fatal(err)
		}
	}
	total := l.Stats().Bytes
	b.SetBytes(total)
	b.ReportAllocs()
	m := newCPUMeter()
	readAll(b, l, Limits{Bytes: 4 << 20})
	m.report(b, int64(b.N)*total)
}

// readAll reads l from start to end with lim at each b.Loop and returns the rows of the last
// Read.
func readAll(b *testing.B, l *Log, lim Limits) []Row {
	r := l.NewReader()
	defer r.Close()
	var rows []Row
	var err error
	for b.Loop() {
		var after int64
		for after < l.Durable() {
			if rows, after, err = r.Read(after, lim, rows[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
	return rows
}

// BenchmarkReadSkipping reads a log of 200,000 small log records (1-record requests) through a
// Reader that takes traces only, as the traces projector reads under a logs-only load: every
// row is skipped, its payload never read.
func BenchmarkReadSkipping(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), Sync: SyncOff})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := make([]Entry, 1000)
	for i := range batch {
		batch[i] = Entry{Signal: signal.Logs, Records: 1, Payload: randomPayload(200)}
	}
	for range 200 {
		if _, _, err := l.Write(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(l.Stats().Bytes)
	if rows := readAll(b, l, Limits{Signal: signal.Traces, Rows: 2048}); len(rows) != 0 {
		b.Fatalf("read %d rows, want 0 (no traces)", len(rows))
	}
}
