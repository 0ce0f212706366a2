// Package otlpgen builds synthetic OTLP export requests (logs, metrics,
// traces) with go.opentelemetry.io/collector/pdata and pre-encodes them into a
// pool of ready-to-send bodies, so a load generator's hot loop never marshals.
//
// Payloads are shaped by Config: records per request, attributes per record
// and their value cardinality, log body size, spans per trace (real
// parent/child trees), and the number of distinct service resources. The same
// Seed and BaseTime give byte-identical pools.
//
// "Records" means what the OTLP partial_success message counts: log records
// for logs, data points for metrics, spans for traces.
package otlpgen
