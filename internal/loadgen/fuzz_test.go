package loadgen

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// FuzzParseRejected feeds arbitrary response bodies (untrusted server
// input) to the partial_success decoder: it must not panic, and a count it
// returns must be what the body says.
func FuzzParseRejected(f *testing.F) {
	r := plogotlp.NewExportResponse()
	r.PartialSuccess().SetRejectedLogRecords(3)
	pb, _ := r.MarshalProto()
	js, _ := r.MarshalJSON()
	f.Add(uint8(0), false, pb)
	f.Add(uint8(0), true, js)
	f.Add(uint8(1), true, []byte(`{"partialSuccess":{"rejectedDataPoints":"5"}}`))
	f.Add(uint8(2), false, []byte{0x0a, 0x02, 0x08, 0x07})
	f.Add(uint8(2), false, []byte{0xff, 0xff})
	f.Add(uint8(1), true, []byte(`{`))
	f.Fuzz(func(t *testing.T, sig uint8, json bool, body []byte) {
		ct := "application/x-protobuf"
		if json {
			ct = "application/json"
		}
		n, err := parseRejected(signal.Signal(sig%3+1), ct, body)
		if err != nil && n != 0 {
			t.Errorf("error %v with count %d", err, n)
		}
	})
}
