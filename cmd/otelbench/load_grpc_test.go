package main

import (
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// TestLoadProtocol checks what --protocol and OTEL_EXPORTER_OTLP_PROTOCOL
// make of the config: the protocol, grpc's default endpoint, http/json's
// encoding, and the flag winning over the variable.
func TestLoadProtocol(t *testing.T) {
	tests := []struct {
		name         string
		env          string
		args         []string
		wantProtocol loadgen.Protocol
		wantEndpoint string
		wantEncoding otlpgen.Encoding
	}{
		{"default", "", nil, "", loadgen.DefaultEndpoint, otlpgen.EncodingProto},
		{"grpc flag", "", []string{"--protocol", "grpc"}, loadgen.ProtocolGRPC, "", otlpgen.EncodingProto},
		{"grpc endpoint", "", []string{"--protocol", "grpc", "--endpoint", "10.0.0.1:4317"}, loadgen.ProtocolGRPC, "10.0.0.1:4317", otlpgen.EncodingProto},
		{"grpc env", "grpc", nil, loadgen.ProtocolGRPC, "", otlpgen.EncodingProto},
		{"flag over env", "grpc", []string{"--protocol", "http/protobuf"}, loadgen.ProtocolHTTPProtobuf, loadgen.DefaultEndpoint, otlpgen.EncodingProto},
		{"http/json", "", []string{"--protocol", "http/json"}, loadgen.ProtocolHTTPJSON, loadgen.DefaultEndpoint, otlpgen.EncodingJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(protocolEnv, tt.env)
			var f loadFlags
			fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
			f.bind(fs, true)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config(io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Protocol != tt.wantProtocol || cfg.Endpoint != tt.wantEndpoint || cfg.Payload.Encoding != tt.wantEncoding {
				t.Errorf("got protocol %q endpoint %q encoding %q, want %q %q %q", cfg.Protocol, cfg.Endpoint, cfg.Payload.Encoding,
					tt.wantProtocol, tt.wantEndpoint, tt.wantEncoding)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		code, out := runCLI(t, "load", "--requests", "1", "--protocol", "thrift")
		if code != 2 {
			t.Errorf("exit %d, want 2; output:\n%s", code, out)
		}
	})
}
