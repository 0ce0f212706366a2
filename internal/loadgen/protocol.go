package loadgen

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Protocol is the OTLP transport of a run, named as OTEL_EXPORTER_OTLP_PROTOCOL
// names it.
type Protocol string

// Protocols. The zero value is ProtocolHTTPProtobuf, or OTLP-JSON when the
// payload encoding says so.
const (
	ProtocolDefault      Protocol = ""
	ProtocolGRPC         Protocol = "grpc"
	ProtocolHTTPProtobuf Protocol = "http/protobuf"
	ProtocolHTTPJSON     Protocol = "http/json"
)

// DefaultGRPCEndpoint is the OTLP/gRPC port of the specification, on loopback.
const DefaultGRPCEndpoint = "127.0.0.1:4317"

// isGRPC reports whether c sends OTLP/gRPC.
func (c Config) isGRPC() bool { return c.Protocol == ProtocolGRPC }

// validateProtocol checks the fields that depend on the protocol.
func (c Config) validateProtocol() error {
	switch c.Protocol {
	case ProtocolDefault, ProtocolHTTPProtobuf, ProtocolHTTPJSON:
		if c.Connections != 0 {
			return fmt.Errorf("%w: connections applies to protocol grpc only (HTTP/1.1 uses one per worker)", ErrInvalidConfig)
		}
		return nil
	case ProtocolGRPC:
	default:
		return fmt.Errorf("%w: protocol %q (want grpc, http/protobuf or http/json)", ErrInvalidConfig, c.Protocol)
	}
	if c.Payload.Encoding != "" && c.Payload.Encoding != "proto" {
		return fmt.Errorf("%w: protocol grpc sends protobuf only, not encoding %q", ErrInvalidConfig, c.Payload.Encoding)
	}
	if c.Sender != SenderAuto {
		return fmt.Errorf("%w: sender %q is an HTTP client; protocol grpc has its own", ErrInvalidConfig, c.Sender)
	}
	if c.Connections < 0 || c.Connections > c.withDefaults().Concurrency {
		return fmt.Errorf("%w: connections %d out of range 1..concurrency", ErrInvalidConfig, c.Connections)
	}
	if c.Endpoint != "" {
		if _, _, err := grpcTarget(c.Endpoint); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
	}
	return nil
}

// grpcTarget parses a gRPC endpoint: host:port, http://host:port (plain
// text) or https://host:port (TLS), as OTEL_EXPORTER_OTLP_ENDPOINT gives it.
func grpcTarget(endpoint string) (target string, tls bool, err error) {
	hostport := endpoint
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return "", false, fmt.Errorf("endpoint: %v", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return "", false, fmt.Errorf("endpoint %q: want host:port, http://host:port or https://host:port", endpoint)
		}
		if u.Path != "" && u.Path != "/" {
			return "", false, fmt.Errorf("endpoint %q: a gRPC endpoint has no path", endpoint)
		}
		hostport, tls = u.Host, u.Scheme == "https"
	}
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		return "", false, fmt.Errorf("endpoint %q: want host:port: %v", endpoint, err)
	}
	return hostport, tls, nil
}
