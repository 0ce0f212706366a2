package project

import (
	"fmt"
	"testing"

	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/storetest"
)

// BenchmarkStage measures the stager alone: decoding load-shaped payloads into a slice's rows
// and packing its chunks and texts, 512 requests a slice, no database.
func BenchmarkStage(b *testing.B) {
	for _, sig := range []signal.Signal{signal.Logs, signal.Traces, signal.Metrics} {
		b.Run(fmt.Sprintf("%s/records=10/load-shaped", sig), func(b *testing.B) {
			payloads := storetest.LoadShaped(sig, 10)
			var st slice
			const sliceRows = 512
			b.ReportAllocs()
			b.ResetTimer()
			records := 0
			for i := 0; i < b.N; i++ {
				st.reset(1, 1)
				for j := range sliceRows {
					r := rawlog.Row{ID: int64(i*sliceRows + j), Signal: sig, Records: 10, Payload: payloads[(i*sliceRows+j)%len(payloads)].Body}
					if err := st.stageRow(&r); err != nil {
						b.Fatal(err)
					}
				}
				st.Pack()
				records += st.Records()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
		})
	}
}
