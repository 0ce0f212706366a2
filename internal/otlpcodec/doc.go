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
package otlpcodec
