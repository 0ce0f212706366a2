// Package signal names the three OTLP signals (logs, metrics, traces) once for
// every package that handles them: the generator, the load generator, the
// decoder, the ingest server and the store.
//
// A Signal's numeric value is stored in the store's raw.signal column, so the
// values 1, 2 and 3 must never change; 0 is invalid so that a zero value is
// caught rather than taken for logs. Arrays with one slot per signal have
// length Count and are indexed by Signal.Index.
package signal
