package otlpcodec

import (
	"errors"
	"testing"
)

func TestParseContentType(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Encoding
		err  error
	}{
		{"proto", "application/x-protobuf", EncodingProto, nil},
		{"json", "application/json", EncodingJSON, nil},
		{"json charset", "application/json; charset=utf-8", EncodingJSON, nil},
		{"proto upper", "Application/X-Protobuf", EncodingProto, nil},
		{"empty", "", 0, ErrUnsupportedMediaType},
		{"text", "text/plain", 0, ErrUnsupportedMediaType},
		{"protobuf alias", "application/protobuf", 0, ErrUnsupportedMediaType},
		{"garbage", ";;;", 0, ErrUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseContentType(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseContentType(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("ParseContentType(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseCompression(t *testing.T) {
	tests := []struct {
		in   string
		want Compression
		err  error
	}{
		{"", CompressionNone, nil},
		{"identity", CompressionNone, nil},
		{"none", CompressionNone, nil},
		{"gzip", CompressionGzip, nil},
		{"GZIP", CompressionGzip, nil},
		{"zstd", CompressionZstd, nil},
		{"br", 0, ErrUnsupportedEncoding},
		{"deflate", 0, ErrUnsupportedEncoding},
		{"gzip, zstd", 0, ErrUnsupportedEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCompression(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseCompression(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("ParseCompression(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
