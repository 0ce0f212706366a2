package otlpcodec

import "github.com/otelbench/otelbench/internal/signal"

// Test hooks: the protobuf scan and the pdata path it stands in for.
var (
	DecodePdata  = decodePdata
	JSONShape    = jsonShape
	MaxJSONDepth = maxJSONDepth
)

// ScanProto reports the records of a protobuf body and whether the scan
// proved pdata would accept it whole.
func ScanProto(sig signal.Signal, body []byte) (int, bool) {
	r := scanProto(sig, body)
	return r.records, r.ok
}
