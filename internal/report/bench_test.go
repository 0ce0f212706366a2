package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/loadgen"
)

// BenchmarkMerge100 reads 100 shard reports from their JSON and merges them,
// the work of `otelbench report merge` on 100 files (disk reads aside). Each
// report holds three signals of 20,000 latencies spread from 100 µs to 10 s,
// filling as many histogram buckets as a long, noisy run does.
func BenchmarkMerge100(b *testing.B) {
	const n = 100
	rng := rand.New(rand.NewPCG(9, 10))
	files := make([][]byte, n)
	for i := range files {
		lat := map[string][]int64{}
		for _, sig := range []string{"logs", "metrics", "traces"} {
			v := make([]int64, 20_000)
			for j := range v {
				v[j] = 100 + int64(rng.ExpFloat64()*float64(1+rng.Int64N(1_000_000)))%10_000_000
			}
			lat[sig] = v
		}
		start := t0.Add(time.Duration(i) * time.Millisecond)
		r := build(b, sample{started: start, seconds: 60, shard: shard(i, n, start), lat: lat}, nil)
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			b.Fatal(err)
		}
		files[i] = buf.Bytes()
	}
	b.ResetTimer()
	for b.Loop() {
		in := make([]Input, n)
		for i, f := range files {
			r, err := loadgen.ReadReport(bytes.NewReader(f))
			if err != nil {
				b.Fatal(err)
			}
			in[i] = Input{Name: fmt.Sprint(i), Report: r}
		}
		if _, err := Merge(in); err != nil {
			b.Fatal(err)
		}
	}
}
