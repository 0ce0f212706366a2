// Package ingestsrv is the HTTP half of `otelbench serve`: an OTLP/HTTP ingest
// server (POST /v1/logs, /v1/metrics, /v1/traces; protobuf or JSON; identity,
// gzip or zstd) in front of internal/store, plus /healthz, /api/v1/stats,
// /metrics (Prometheus) and optionally /debug/pprof.
//
// A 200 is a promise that the data is on disk: the handler answers only after
// store.Append returned nil, which happens after the group commit holding the
// payload was fsynced (with the default sync mode). Everything else maps to
// the status codes of the OTLP specification: 400 undecodable (with a
// google.rpc.Status body), 405 not POST, 408 a body slower than
// Config.MinBodyRate, 413 too large before or after decompression, too
// many records or too costly to decode, 415 unsupported media type or encoding, 503 with
// Retry-After when the queue or the memory budget is full or the server is
// shutting down, 507 when the disk is full.
//
// Ingest accepts exactly what the projector can store. An AnyValue (an
// attribute or log body) nested to otlpwire.RecursionLimit levels, the limit
// of pdata's protobuf decoder that the projector reads with, is answered 400
// in both encodings; AnyValue, ArrayValue, KeyValueList and KeyValue each
// count one level, so 49 nested arrayValues or 33 nested kvlistValues are
// the most a value may hold.
//
// Memory is bounded under any overload: bodies are read through a limit
// (never an unbounded io.ReadAll), and the bytes held by requests being read,
// decoded or committed are charged to a budget (Config.InflightBytes); a
// request that would exceed it is answered 503 at once. A body is charged as
// its bytes arrive, not from its declared Content-Length, and one arriving
// slower than Config.MinBodyRate (after its first 5 s) is cut off with 408.
// Decoding with pdata (JSON, and protobuf with records to reject) is charged
// by otlpcodec.DecodeCost: 3 bytes per body byte or 256 per message,
// whichever is more, since pdata allocates per message (2 million empty
// spans in 4 MB took 481 MB); a request whose cost exceeds the whole budget
// is answered 413. Protobuf that the scan proves valid is stored as is and
// charged its body only. A request may hold Config.MaxRecords records
// (65,536), rejected ones included; more get 413, which bounds what one
// request costs the projector as well.
//
// Connections are admitted up to Config.MaxConns, at most
// Config.MaxConnsPerSource from one source address; past either a small
// bounded rejecter (admit.go) answers a canned 503 + Retry-After +
// Connection: close without involving net/http, so overloaded clients see a
// retryable answer, not a connect timeout; past Config.MaxRejecting
// connections are closed at once. Rejections are counted by reason in
// /api/v1/stats and /metrics, and /metrics has the histogram
// otelbench_ingest_request_duration_seconds (request head read to answer
// written) by signal, transport and status code.
//
// OTLP/gRPC (grpc*.go) serves the three Export RPCs on Config.GRPC.Addr and
// on the HTTP listener too (HTTP/2 without TLS), through the same budget,
// decode charge, record and nesting limits, store.Append and counters as
// OTLP/HTTP (Server.commit); the message bytes go to the same validating
// scan without a decode into pdata (internal/otlpgrpc's codec). OK is
// answered only once Append returned nil, with partial_success as over
// HTTP. Refusals follow the OTLP/gRPC specification: UNAVAILABLE with a
// RetryInfo of DefaultRetryAfter seconds when overloaded, draining, the
// queue is full or storage failed; INVALID_ARGUMENT for undecodable
// messages, values nested too deep or bad compression; RESOURCE_EXHAUSTED
// without RetryInfo (not retried) over GRPCConfig.MaxRecv, Config.MaxRecords
// or a decode cost over the whole budget; UNAUTHENTICATED without the
// bearer token in the authorization metadata (with AuthIngest). A full disk
// is RESOURCE_EXHAUSTED with RetryInfo, which the specification makes
// retryable: space can come back, and clients keep the data meanwhile.
// gRPC connections count against Config.MaxConns and
// Config.MaxConnsPerSource with HTTP's; past either they are closed at once
// (gRPC clients see UNAVAILABLE and retry). The latency histogram has them
// under transport="grpc", with the gRPC code name as code.
package ingestsrv
