package otlptest

import (
	"bytes"
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// NestedLogs is a request of one log record whose body nests levels
// one-element arrays (or maps, with kvlist), ending in a string: each level
// is an AnyValue and an ArrayValue (or an AnyValue, a KeyValueList and a
// KeyValue) to pdata's depth count, so the leaf is at depth 2*levels (or
// 3*levels).
func NestedLogs(levels int, kvlist bool) plogotlp.ExportRequest {
	req := plogotlp.NewExportRequest()
	v := req.Logs().ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body()
	for range levels {
		if kvlist {
			v = v.SetEmptyMap().PutEmpty("k")
		} else {
			v = v.SetEmptySlice().AppendEmpty()
		}
	}
	v.SetStr("leaf")
	return req
}

// EmptyRecords is a protobuf Export*ServiceRequest holding n empty records
// under one resource and one scope (field 2 of the scope message: spans of
// a traces request, log records of a logs request), 2n+8 bytes at most:
// the cheapest body per record, for tests of what decoding costs.
func EmptyRecords(n int) []byte {
	wrap := func(tag byte, b []byte) []byte { // a length-delimited field (wire type 2)
		return append(binary.AppendUvarint([]byte{tag}, uint64(len(b))), b...)
	}
	return wrap(0x0a, wrap(0x12, bytes.Repeat([]byte{0x12, 0}, n))) // fields 1, 2, then n x field 2
}
