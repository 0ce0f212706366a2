// Package otlpwire is the one reader of OTLP protobuf bytes outside pdata: the ingest scanner
// (internal/otlpcodec) and the projector's stager (internal/stage) both walk requests with it,
// so that what they accept is exactly what pdata v1.71's generated UnmarshalProto accepts.
//
// It owns three layers:
//   - the wire primitives (wire.go), quirks included: a field number is the tag shifted and
//     truncated to int32, a varint takes at most ten bytes with only the low bit of the tenth
//     kept, and an unknown group ends at its first non-group field (pdata's
//     internal/proto/unmarshal.go);
//   - the message tables (messages.go): for each message of the three Export*ServiceRequests,
//     the kind of each known field (varint, fixed64, fixed32, bytes, message, trace or span
//     id, packed run), from pdata's generated_proto_*.go;
//   - the walker (walk.go): Reader reads one field at a time and checks it against its
//     message's table; Check walks a whole subtree, with the AnyValue family's nesting limit.
//
// A consumer keeps its own policy above it: what to count (the scanner), which rows to build
// and which shapes to leave to pdata (the stager).
package otlpwire
