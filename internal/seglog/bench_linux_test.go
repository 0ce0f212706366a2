package seglog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// The payload sizes of 100- and 1,000-record OTLP log requests (docs/BENCHMARKS.md's bulk shapes).
var benchShapes = []struct {
	name  string
	bytes int
}{{"12KB", 12 << 10}, {"122KB", 122 << 10}}

// cpuMeter reports CPU-seconds (user+system, the whole process) per GB of payload.
type cpuMeter struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (m *cpuMeter) report(b *testing.B, bytes int64) {
	cpu := cpuNow() - m.start
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
// for the previous group's fsync, so each fsync overlaps the next write.
func BenchmarkAppend(b *testing.B) {
	for _, sh := range benchShapes {
		for _, v := range []struct {
			name    string
			group   int
			growing bool
		}{{"seglog", 1, false}, {"seglog", 16, false}, {"seglog-growing", 1, true}, {"seglog-growing", 16, true}} {
			group := v.group
			b.Run(fmt.Sprintf("%s/%s/group=%d", v.name, sh.name, group), func(b *testing.B) {
				l, err := Open(Config{Dir: b.TempDir(), growing: v.growing})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				payload := randomPayload(sh.bytes)
				batch := make([]Entry, group)
				for i := range batch {
					batch[i] = Entry{Signal: signal.Logs, Records: 100, Payload: payload}
				}
				b.SetBytes(int64(sh.bytes * group))
				b.ReportAllocs()
				m := cpuMeter{start: cpuNow()}
				var prev int64
				for b.Loop() {
					_, last, err := l.Write(batch)
					if err != nil {
						b.Fatal(err)
					}
					if err := l.WaitDurable(context.Background(), prev); err != nil {
						b.Fatal(err)
					}
					prev = last
				}
				if err := l.WaitDurable(context.Background(), prev); err != nil {
					b.Fatal(err)
				}
				m.report(b, int64(b.N)*int64(sh.bytes*group))
				b.ReportMetric(float64(l.Stats().Syncs)/float64(b.N), "fsyncs/op")
			})
		}
	}
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
	m := cpuMeter{start: cpuNow()}
	r := l.NewReader()
	defer r.Close()
	var rows []Row
	for b.Loop() {
		var after int64
		for after < l.Durable() {
			if rows, after, err = r.Read(after, Limits{Bytes: 4 << 20}, rows); err != nil {
				b.Fatal(err)
			}
		}
	}
	m.report(b, int64(b.N)*total)
}
