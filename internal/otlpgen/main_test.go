package otlpgen

import (
	"testing"

	"go.uber.org/goleak"
)

// The zstd encoder starts goroutines; NewPool must release them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func BenchmarkNewPool(b *testing.B) {
	for _, enc := range []Encoding{EncodingProto, EncodingJSON} {
		b.Run(string(enc), func(b *testing.B) {
			for b.Loop() {
				if _, err := NewPool(Config{Records: 100, Attrs: 4, PoolSize: 4, Encoding: enc}, allSignals[:]...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
