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
//
// OTLP/gRPC (grpc*.go) serves the three Export RPCs on Config.GRPC.Addr and
// on the HTTP listener too (HTTP/2 without TLS), through the same budget,
// store.Append and counters; the message bytes go to the same validating
// scan without a decode into pdata (internal/otlpgrpc's codec). OK is
// answered only once Append returned nil, with partial_success as over
// HTTP. Refusals follow the OTLP/gRPC specification: UNAVAILABLE with a
// RetryInfo of DefaultRetryAfter seconds when overloaded, draining, the
// queue is full or storage failed; INVALID_ARGUMENT for undecodable
// messages or compression; RESOURCE_EXHAUSTED without RetryInfo over
// GRPCConfig.MaxRecv (not retried); UNAUTHENTICATED without the bearer
// token in the authorization metadata (with AuthIngest). A full disk is
// RESOURCE_EXHAUSTED with RetryInfo, which the specification makes
// retryable: space can come back, and clients keep the data meanwhile.
// gRPC connections count against Config.MaxConns with HTTP's; past it they
// are closed at once (gRPC clients see UNAVAILABLE and retry).
package ingestsrv
