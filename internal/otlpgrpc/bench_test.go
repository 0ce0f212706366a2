package otlpgrpc

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/signal"
)

// protoMessage is an Export*ServiceRequest of pdata.
type protoMessage interface {
	MarshalProto() ([]byte, error)
	UnmarshalProto([]byte) error
}

// BenchmarkServerPath compares what the server does with a received
// message: "raw" is this package's codec into otlpcodec.Decode's scan, the
// bytes stored as they came; "pdata" is what pdata's plogotlp, pmetricotlp
// and ptraceotlp gRPC server interfaces would cost: a decode into pdata and
// an encoding back to protobuf for the store.
func BenchmarkServerPath(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		reqs := []struct {
			sig   signal.Signal
			msg   protoMessage
			fresh func() protoMessage
		}{
			{signal.Logs, otlptest.Logs(0, n), func() protoMessage { r := plogotlp.NewExportRequest(); return &r }},
			{signal.Metrics, otlptest.Metrics(0, n, 0), func() protoMessage { r := pmetricotlp.NewExportRequest(); return &r }},
			{signal.Traces, otlptest.Traces(0, n, 0), func() protoMessage { r := ptraceotlp.NewExportRequest(); return &r }},
		}
		for _, r := range reqs {
			body, err := r.msg.MarshalProto()
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("raw/%v/%d", r.sig, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if _, err := otlpcodec.Decode(r.sig, otlpcodec.EncodingProto, body, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("pdata/%v/%d", r.sig, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					m := r.fresh()
					if err := m.UnmarshalProto(body); err != nil {
						b.Fatal(err)
					}
					if _, err := m.MarshalProto(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
