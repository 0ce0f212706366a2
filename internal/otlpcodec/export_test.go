package otlpcodec

// Test hooks: the protobuf scan and the pdata path it stands in for.
var (
	ScanProto   = scanProto
	DecodePdata = decodePdata
)
