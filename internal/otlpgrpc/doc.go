// Package otlpgrpc holds what the OTLP/gRPC server (internal/ingestsrv) and
// client (internal/loadgen) share: the Export method names of the three OTLP
// services, a gRPC codec that passes protobuf bytes through untouched, and
// the gzip, zstd and snappy compressors the OpenTelemetry Collector speaks.
//
// The codec is the zero-copy path: the server hands the received bytes to
// otlpcodec's validating scan and stores them as they came, like the HTTP
// path, instead of decoding them into pdata and encoding them again; the
// client sends its pre-encoded payloads without a marshal step.
package otlpgrpc
