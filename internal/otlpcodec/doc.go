// Package otlpcodec holds the OTLP/HTTP wire rules shared by the ingest server
// and the load generator: content-type and content-encoding negotiation,
// bounded decompression (a decompression bomb fails with ErrTooLarge without
// ever holding more than the limit), decoding and validating
// Export*ServiceRequest bodies with go.opentelemetry.io/collector/pdata, and
// encoding Export*ServiceResponse and google.rpc.Status bodies in the
// request's encoding.
//
// Validation rule (documented in docs/benchmarks/serve.md and applied by
// Decode): a request that does not decode is rejected whole (HTTP 400). A
// request that decodes is accepted record by record; these records are
// rejected and reported through partial_success:
//
//   - spans whose trace_id or span_id is all zeroes: trace.proto calls such
//     IDs invalid and both fields required (IDs of the wrong length already
//     fail decoding, as in the Collector's otlpreceiver);
//   - metrics with an empty name or without data (no gauge, sum, histogram,
//     exponential histogram or summary): the data model requires both; their
//     data points count as rejected.
//
// Log records have no required field, so logs are never rejected piecemeal.
//
// Protobuf bodies first go through a scan that walks the wire format
// without allocating, with pdata's acceptance rules (scan.go): when it can
// prove the body is one pdata accepts whole, Decode counts its records and
// stores the body as is, without building pdata objects the ingest path
// would throw away. Anything else (JSON, a malformed body, a record to
// reject, deprecated fields) takes the pdata path, which owns every error
// and every partial-success rewrite. FuzzScanMatchesPdata keeps the two in
// agreement.
package otlpcodec
