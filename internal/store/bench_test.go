package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/klauspost/compress/zstd"
	"modernc.org/sqlite"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/selfusage"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/storetest"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// BenchmarkAppend measures durable Append throughput with many concurrent callers (like HTTP
// handlers): ns/op is per request, req/s is the aggregate. "raw" stores only (projection off);
// "projecting" runs the projector concurrently, as the server does.
func BenchmarkAppend(b *testing.B) {
	for _, records := range []int{1, 10, 100, 1000} {
		for _, mode := range []string{"raw", "projecting"} {
			for _, sync := range []SyncMode{SyncFull, SyncNormal} {
				b.Run(fmt.Sprintf("records=%d/%s/sync=%s", records, mode, sync), func(b *testing.B) {
					benchAppend(b, records, mode == "raw", sync)
				})
			}
		}
	}
}

func benchAppend(b *testing.B, records int, noProjection bool, syncMode SyncMode) {
	if os.Getenv("STORE_BENCH_FDATASYNC") != "" {
		prev, _ := sqlite.Fdatasync(true)
		defer sqlite.Fdatasync(prev)
	}
	s, err := Open(context.Background(), Config{Dir: b.TempDir(), Sync: syncMode, NoProjection: noProjection, Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	payload := benchLogs(records)
	b.SetParallelism(64) // 64 callers per GOMAXPROCS
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	cpu0, _ := selfusage.CPU()
	start := time.Now()
	var mu sync.Mutex
	lat := hdrhistogram.New(1, int64(10*time.Second/time.Microsecond), 3)
	b.RunParallel(func(pb *testing.PB) {
		local := hdrhistogram.New(1, int64(10*time.Second/time.Microsecond), 3)
		for pb.Next() {
			t0 := time.Now()
			if err := s.Append(context.Background(), signal.Logs, payload, records); err != nil {
				b.Error(err)
				return
			}
			local.RecordValue(time.Since(t0).Microseconds())
		}
		mu.Lock()
		lat.Merge(local)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	cpu1, _ := selfusage.CPU()
	cpu := cpu1 - cpu0
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(st.Logs.Requests)/float64(max(1, st.Commits)), "req/commit")
	b.ReportMetric(float64(lat.ValueAtQuantile(50))/1000, "p50-ms")
	b.ReportMetric(float64(lat.ValueAtQuantile(99))/1000, "p99-ms")
	b.ReportMetric(float64(lat.Max())/1000, "max-ms")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/req")
	peak, _ := selfusage.PeakRSS() // the whole process: run one benchmark a process
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkProject measures projection throughput: b.N records are stored raw first (not
// timed), then the store is reopened with projection on and timed until it has caught up.
func BenchmarkProject(b *testing.B) {
	for _, tc := range []struct {
		name    string
		sig     signal.Signal
		records int
		payload func(int) []otlpgen.Payload
		live    bool // times advance 1 ms a request (Payload.Stamp) instead of repeating with the pool
	}{
		{"logs/records=1", signal.Logs, 1, one(benchLogs), false},
		{"logs/records=10", signal.Logs, 10, one(benchLogs), false},
		{"traces/records=10", signal.Traces, 10, one(benchTraces), false},
		{"metrics/records=10", signal.Metrics, 10, one(benchMetrics), false},
		{"logs/records=10/random-trace-ids", signal.Logs, 10, bodies(randomTraceLogs), false},
		{"traces/records=10/random-trace-ids", signal.Traces, 10, bodies(randomTraceSpans), false},
		{"metrics/records=10/many-series", signal.Metrics, 10, bodies(manySeries), false},
		{"logs/records=10/load-shaped", signal.Logs, 10, loadShaped(signal.Logs), false},
		{"traces/records=10/load-shaped", signal.Traces, 10, loadShaped(signal.Traces), false},
		{"metrics/records=10/load-shaped", signal.Metrics, 10, loadShaped(signal.Metrics), false},
		{"logs/records=10/load-shaped/live", signal.Logs, 10, loadShaped(signal.Logs), true},
		{"traces/records=10/load-shaped/live", signal.Traces, 10, loadShaped(signal.Traces), true},
		{"metrics/records=10/load-shaped/live", signal.Metrics, 10, loadShaped(signal.Metrics), true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchProject(b, tc.sig, tc.records, tc.payload(tc.records), tc.live)
		})
	}
}

// one makes a payload function the pool of one request, sent over and over.
func one(payload func(int) []byte) func(int) []otlpgen.Payload {
	return bodies(func(n int) [][]byte { return [][]byte{payload(n)} })
}

// bodies makes a payload function of one that returns request bodies. Such payloads have no
// time offsets, so Payload.Stamp leaves them as they are: only otlpgen's can be live.
func bodies(payload func(int) [][]byte) func(int) []otlpgen.Payload {
	return func(n int) []otlpgen.Payload {
		var out []otlpgen.Payload
		for _, b := range payload(n) {
			out = append(out, otlpgen.Payload{Body: b})
		}
		return out
	}
}

// randomTracePool is how many distinct requests the random-trace-ids and many-series cases
// cycle through.
const randomTracePool = 1024

// loadShaped makes a payload function of storetest.LoadShaped's requests of sig.
func loadShaped(sig signal.Signal) func(int) []otlpgen.Payload {
	return func(n int) []otlpgen.Payload { return storetest.LoadShaped(sig, n) }
}

// randomTraceLogs is 1,024 requests like benchLogs(n), each log with its own random trace id,
// as instrumented services send them. benchLogs' ids share 15 of 16 bytes, so an index on
// trace_id takes them as appends; random ids land anywhere in it.
func randomTraceLogs(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([][]byte, randomTracePool)
	for i := range pool {
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(benchLogs(n))
		if err != nil {
			panic(err)
		}
		recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for j := range recs.Len() {
			recs.At(j).SetTraceID(randomTraceID(rng))
		}
		if pool[i], err = logsMarshaler.MarshalLogs(ld); err != nil {
			panic(err)
		}
	}
	return pool
}

// randomTraceSpans is 1,024 requests like benchTraces(n), each one trace with a random id.
func randomTraceSpans(n int) [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	pool := make([][]byte, randomTracePool)
	for i := range pool {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(benchTraces(n))
		if err != nil {
			panic(err)
		}
		id := randomTraceID(rng)
		spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for j := range spans.Len() {
			spans.At(j).SetTraceID(id)
		}
		if pool[i], err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td); err != nil {
			panic(err)
		}
	}
	return pool
}

// manySeries is 1,024 requests like benchMetrics(n), each from its own resource (a
// service.instance.id), so the store holds 2,048 series instead of 2: a slice's points go to as
// many places of the (metric_id, time) indexes as it has series.
func manySeries(n int) [][]byte {
	pool := make([][]byte, randomTracePool)
	for i := range pool {
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(benchMetrics(n))
		if err != nil {
			panic(err)
		}
		md.ResourceMetrics().At(0).Resource().Attributes().PutStr("service.instance.id", fmt.Sprint(i))
		if pool[i], err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md); err != nil {
			panic(err)
		}
	}
	return pool
}

func randomTraceID(rng *rand.Rand) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], rng.Uint64())
	binary.BigEndian.PutUint64(id[8:], rng.Uint64()|1)
	return id
}

// benchProject stores b.N records raw, cycling through payloads (requests of records
// records each), then times projecting them.
func benchProject(b *testing.B, sig signal.Signal, records int, payloads []otlpgen.Payload, live bool) {
	if live && bytes.Equal(payloads[0].Stamp(nil, 1), payloads[0].Body) {
		b.Fatal("live times asked of payloads that cannot be stamped")
	}
	dir := b.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, Sync: SyncOff, NoProjection: true, Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	requests := max(1, b.N/records)
	// Fill from many goroutines so group commit makes the fill fast.
	const fillers = 64
	errs := make(chan error, fillers)
	for g := range fillers {
		go func() {
			for i := g; i < requests; i += fillers {
				p := payloads[i%len(payloads)].Body
				if live {
					p = payloads[i%len(payloads)].Stamp(nil, int64(i)*int64(time.Millisecond))
				}
				if err := s.Append(context.Background(), sig, p, records); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range fillers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	fillRSS, _ := selfusage.PeakRSS() // run one benchmark a process to attribute it
	b.ResetTimer()
	threads0 := threadTimes()
	cpu0, _ := selfusage.CPU()
	start := time.Now()
	s, err = Open(context.Background(), Config{Dir: dir, Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	for {
		st := s.Stats()
		if st.ProjectedRawID == st.LastRawID {
			break
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu1, _ := selfusage.CPU()
	cpu := cpu1 - cpu0
	b.StopTimer()
	if busiest := busiestSince(threads0); busiest > 0 {
		// The thread that commits the slices bounds the rate: the stager and the prune watcher
		// run beside it. While catching up that is the projector's boost worker (worker.go).
		b.ReportMetric(float64(busiest.Nanoseconds())/float64(requests*records), "projector-cpu-ns/record")
	}
	b.ReportMetric(float64(requests*records)/elapsed.Seconds(), "records/s")
	// CPU time per record is steadier than records/s on a shared machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(requests*records), "cpu-ns/record")
	peak, _ := selfusage.PeakRSS() // the whole process: run one benchmark a process
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(fillRSS)/(1<<20), "fill-rss-MiB")
	// Exact, where the timings are noisy: telemetry.db pages the projector wrote (spills
	// included), spilled mid-transaction and read, per 1,000 records.
	pages, perK := s.Stats().ProjectionPages, float64(requests*records)/1000
	b.ReportMetric(float64(pages.Written)/perK, "pages-written/krecord")
	b.ReportMetric(float64(pages.Spilled)/perK, "pages-spilled/krecord")
	b.ReportMetric(float64(pages.Read)/perK, "pages-read/krecord")
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkZstdPayload measures what compressing raw payloads would cost and save: the write
// path is CPU-bound, so compression only pays if it is cheaper than writing the bytes it saves.
func BenchmarkZstdPayload(b *testing.B) {
	for _, records := range []int{1, 10} {
		payload := benchLogs(records)
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			var out []byte
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				out = enc.EncodeAll(payload, out[:0])
			}
			b.ReportMetric(float64(len(payload))/float64(len(out)), "ratio")
		})
		enc.Close()
	}
}

// threadTimes returns the CPU time of each of this process's threads by thread id, or nil
// where /proc does not tell.
func threadTimes() map[string]time.Duration {
	paths, _ := filepath.Glob("/proc/self/task/*/stat")
	times := make(map[string]time.Duration, len(paths))
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:])) // from field 3 on
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15, in clock ticks
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		times[filepath.Base(filepath.Dir(path))] = time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
	return times
}

// busiestSince returns the most CPU time one thread used since before (threadTimes).
func busiestSince(before map[string]time.Duration) time.Duration {
	var busiest time.Duration
	for tid, t := range threadTimes() {
		busiest = max(busiest, t-before[tid])
	}
	return busiest
}
