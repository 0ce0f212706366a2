// Package loadgen drives an OTLP/HTTP endpoint with a weighted mix of logs,
// metrics and traces and accounts for every request exactly.
//
// Two load models are supported. The closed model runs Concurrency workers
// that each send as soon as their previous request finished; latency is
// measured from the send. The open model (Rate > 0) hands out intended send
// times from a Pacer at a constant arrival rate; latency is measured from the
// intended send time, so a server stall shows up in the latency of every
// request that should have been sent during it (coordinated-omission
// correction, as wrk2 and vegeta do). The uncorrected latency, measured from
// the actual send, is reported beside it, and sends that fell behind schedule
// are counted.
//
// Payloads come pre-encoded from otlpgen, so the hot loop never marshals.
// Results are a Report (schema "otelbench.load/v2", documented in
// docs/load-report.md) whose latency histograms are HDR histograms in their
// standard compressed encoding, so reports from several machines can be
// merged with Merge.
package loadgen
