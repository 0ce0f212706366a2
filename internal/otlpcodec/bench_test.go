package otlpcodec_test

import (
	"fmt"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/signal"
)

// BenchmarkDecode measures the per-request decode+validate cost of the
// ingest path (pdata), protobuf and JSON, 1 and 10 records.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1, 10} {
		reqs := []struct {
			sig signal.Signal
			msg otlptest.Message
		}{
			{signal.Logs, otlptest.Logs(0, n)},
			{signal.Metrics, otlptest.Metrics(0, n, 0)},
			{signal.Traces, otlptest.Traces(0, n, 0)},
		}
		for _, r := range reqs {
			for _, enc := range []otlpcodec.Encoding{otlpcodec.EncodingProto, otlpcodec.EncodingJSON} {
				body := otlptest.Encode(b, r.msg, enc)
				b.Run(fmt.Sprintf("%v/%d/%v", r.sig, n, enc), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						if _, err := otlpcodec.Decode(r.sig, enc, body, nil); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
