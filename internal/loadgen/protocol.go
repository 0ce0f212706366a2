package loadgen

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// DefaultGRPCEndpoint is the OTLP/gRPC port of the specification, on loopback.
const DefaultGRPCEndpoint = "http://127.0.0.1:4317"

// isGRPC reports whether c sends OTLP/gRPC.
func (c Config) isGRPC() bool { return c.Protocol == ProtocolGRPC }

// validateGRPC checks the fields that protocol grpc constrains.
func (c Config) validateGRPC() error {
	if c.Payload.Encoding != "" && c.Payload.Encoding != otlpgen.EncodingProto {
		return fmt.Errorf("protocol grpc sends protobuf only, not encoding %q", c.Payload.Encoding)
	}
	if c.Sender != SenderAuto {
		return fmt.Errorf("sender %q is an HTTP client; protocol grpc has its own", c.Sender)
	}
	if c.Connections < 0 || c.Connections > c.withDefaults().Concurrency {
		return fmt.Errorf("connections %d out of range 1..concurrency", c.Connections)
	}
	for _, e := range c.SignalEndpoints {
		if e != "" {
			return errors.New("per-signal endpoints (OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT) apply to OTLP/HTTP; protocol grpc sends every signal to the one endpoint")
		}
	}
	tls := false
	if c.Endpoint != "" {
		var err error
		if _, tls, err = grpcTarget(c.Endpoint, c.Insecure); err != nil {
			return err
		}
	}
	return c.GRPCClient.validate(tls)
}

// grpcTarget parses a gRPC endpoint as the exporters read OTEL_EXPORTER_OTLP_ENDPOINT for
// grpc: http://host:port (plain text), https://host:port (TLS), or host:port alone, which
// speaks TLS unless insecure (OTEL_EXPORTER_OTLP_INSECURE), as an OTLP/HTTP host:port does.
func grpcTarget(endpoint string, insecure bool) (target string, tls bool, err error) {
	s, err := normalizeEndpoint(endpoint, insecure)
	if err != nil {
		return "", false, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false, fmt.Errorf("endpoint: %v", err)
	}
	if u.Path != "" && u.Path != "/" {
		return "", false, fmt.Errorf("endpoint %q: a gRPC endpoint has no path", endpoint)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", false, fmt.Errorf("endpoint %q: want host:port: %v", endpoint, err)
	}
	return u.Host, u.Scheme == "https", nil
}
