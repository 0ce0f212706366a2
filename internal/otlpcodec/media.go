package otlpcodec

import (
	"errors"
	"fmt"
	"mime"
	"strings"
)

// Content types of OTLP/HTTP (OTLP specification, "OTLP/HTTP Request").
const (
	ContentTypeProto = "application/x-protobuf"
	ContentTypeJSON  = "application/json"
)

// Errors of negotiation and body reading.
var (
	// ErrUnsupportedMediaType means the Content-Type is neither OTLP
	// protobuf nor OTLP-JSON (HTTP 415).
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrUnsupportedEncoding means the Content-Encoding is not identity,
	// gzip or zstd (HTTP 415).
	ErrUnsupportedEncoding = errors.New("unsupported content encoding")
	// ErrTooLarge means the body, before or after decompression, exceeds
	// the limit (HTTP 413).
	ErrTooLarge = errors.New("request body too large")
	// ErrCorrupt means the body could not be decompressed or decoded
	// (HTTP 400).
	ErrCorrupt = errors.New("undecodable request body")
	// ErrTooDeep means an AnyValue nests arrays or maps to
	// otlpwire.RecursionLimit levels or more (HTTP 400; errors wrapping it
	// wrap ErrCorrupt too). The projector cannot read such a value back.
	ErrTooDeep = errors.New("AnyValue nested too deep")
)

// Encoding is the serialization of an OTLP message.
type Encoding uint8

// Encodings of OTLP/HTTP.
const (
	EncodingProto Encoding = iota + 1
	EncodingJSON
)

// String returns "proto" or "json".
func (e Encoding) String() string {
	switch e {
	case EncodingProto:
		return "proto"
	case EncodingJSON:
		return "json"
	}
	return fmt.Sprintf("Encoding(%d)", uint8(e))
}

// ContentType returns the media type of e.
func (e Encoding) ContentType() string {
	if e == EncodingJSON {
		return ContentTypeJSON
	}
	return ContentTypeProto
}

// ParseContentType returns the encoding named by a Content-Type header value
// (parameters such as charset are ignored). It fails with
// ErrUnsupportedMediaType for anything else.
func ParseContentType(v string) (Encoding, error) {
	mt := v
	// Fast path: the exact values clients send nearly always skip the MIME parser.
	if v != ContentTypeProto && v != ContentTypeJSON {
		var err error
		if mt, _, err = mime.ParseMediaType(v); err != nil {
			return 0, fmt.Errorf("%w: %q", ErrUnsupportedMediaType, v)
		}
	}
	switch mt {
	case ContentTypeProto:
		return EncodingProto, nil
	case ContentTypeJSON:
		return EncodingJSON, nil
	}
	return 0, fmt.Errorf("%w: %q (want %s or %s)", ErrUnsupportedMediaType, v, ContentTypeProto, ContentTypeJSON)
}

// Compression is a Content-Encoding.
type Compression uint8

// Compressions supported for request bodies.
const (
	CompressionNone Compression = iota
	CompressionGzip
	CompressionZstd
)

// String returns the Content-Encoding token ("identity", "gzip", "zstd").
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "identity"
	case CompressionGzip:
		return "gzip"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// ParseCompression returns the compression named by a Content-Encoding header
// value or a flag ("", "none", "identity", "gzip", "zstd"; case-insensitive).
// It fails with ErrUnsupportedEncoding for anything else, including stacked
// encodings.
func ParseCompression(v string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "identity", "none":
		return CompressionNone, nil
	case "gzip", "x-gzip":
		return CompressionGzip, nil
	case "zstd":
		return CompressionZstd, nil
	}
	return 0, fmt.Errorf("%w: %q (want identity, gzip or zstd)", ErrUnsupportedEncoding, v)
}

// gRPC status codes used in google.rpc.Status bodies (google.golang.org/grpc/codes).
const (
	CodeInvalidArgument   int32 = 3
	CodeResourceExhausted int32 = 8
	CodeUnimplemented     int32 = 12
	CodeUnavailable       int32 = 14
	CodeUnauthenticated   int32 = 16
)
