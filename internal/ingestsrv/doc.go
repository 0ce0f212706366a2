// Package ingestsrv is the HTTP half of `otelbench serve`: an OTLP/HTTP ingest
// server (POST /v1/logs, /v1/metrics, /v1/traces; protobuf or JSON; identity,
// gzip or zstd) in front of internal/store, plus /healthz, /api/v1/stats,
// /metrics (Prometheus) and optionally /debug/pprof.
//
// A 200 is a promise that the data is on disk: the handler answers only after
// store.Append returned nil, which happens after the group commit holding the
// payload was fsynced (with the default sync mode). Everything else maps to
// the status codes of the OTLP specification: 400 undecodable (with a
// google.rpc.Status body), 405 not POST, 413 too large before or after
// decompression, 415 unsupported media type or encoding, 503 with Retry-After
// when the queue or the memory budget is full or the server is shutting down,
// 507 when the disk is full.
//
// Memory is bounded under any overload: bodies are read through a limit
// (never an unbounded io.ReadAll), and the bytes held by requests being read,
// decoded or committed are charged to a budget (Config.InflightBytes); a
// request that would exceed it is answered 503 at once. Connections are
// admitted up to Config.MaxConns; past it a small bounded rejecter (admit.go)
// answers a canned 503 + Retry-After + Connection: close without involving
// net/http, so overloaded clients see a retryable answer, not a connect
// timeout; past Config.MaxRejecting connections are closed at once.
package ingestsrv
