package loadgen

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// The OpenTelemetry exporter conventions: the environment variables every OTLP exporter reads
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/), the endpoint forms they
// accept, and their TLS settings. Kept apart from the HTTP sender so that another transport
// reads them the same way.

// Protocol is the OTLP transport and encoding (OTEL_EXPORTER_OTLP_PROTOCOL).
type Protocol string

// Protocols load speaks.
const (
	ProtocolHTTPProtobuf Protocol = "http/protobuf"
	ProtocolHTTPJSON     Protocol = "http/json"
	ProtocolGRPC         Protocol = "grpc" // OTLP/gRPC, protobuf (grpc.go)
)

// DefaultProtocol is the exporters' default for OTLP/HTTP.
const DefaultProtocol = ProtocolHTTPProtobuf

// encoding returns the payload encoding of p.
func (p Protocol) encoding() otlpgen.Encoding {
	if p == ProtocolHTTPJSON {
		return otlpgen.EncodingJSON
	}
	return otlpgen.EncodingProto
}

func (p Protocol) validate() error {
	switch p {
	case "", ProtocolHTTPProtobuf, ProtocolHTTPJSON, ProtocolGRPC:
		return nil
	}
	return fmt.Errorf("protocol %q (want http/protobuf, http/json or grpc)", p)
}

// TLSConfig holds the client's TLS settings for https:// endpoints.
type TLSConfig struct {
	CAFile             string // PEM CA bundle the server certificate must chain to (else the system roots)
	CertFile, KeyFile  string // client certificate and key, PEM, for servers that ask for one (mTLS)
	InsecureSkipVerify bool   // accept any server certificate: test servers only
}

// clientConfig returns the crypto/tls configuration of t for serverName.
func (t TLSConfig) clientConfig(serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("a client certificate needs both --cert and --key (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY)")
	}
	if t.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// normalizeEndpoint returns s as a URL with a scheme: exporters accept host:port alone, and
// then speak TLS unless told the endpoint is insecure (OTEL_EXPORTER_OTLP_INSECURE).
func normalizeEndpoint(s string, insecure bool) (string, error) {
	if !strings.Contains(s, "://") {
		scheme := "https://"
		if insecure {
			scheme = "http://"
		}
		s = scheme + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("endpoint %q: want http://host:port, https://host:port or host:port", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// signalURL returns the URL the requests of sig go to: its own endpoint as given, or the base
// endpoint with the signal's path appended.
func (c Config) signalURL(sig signal.Signal) (string, error) {
	if e := c.SignalEndpoints[sig.Index()]; e != "" {
		u, err := normalizeEndpoint(e, c.Insecure)
		if err != nil {
			return "", fmt.Errorf("%s endpoint: %w", sig, err)
		}
		if parsed, _ := url.Parse(u); parsed.Path == "" {
			u += "/" // a per-signal endpoint is used as given; an empty path is "/"
		}
		return u, nil
	}
	base := cmp.Or(c.Endpoint, DefaultEndpoint)
	u, err := normalizeEndpoint(base, c.Insecure)
	if err != nil {
		return "", err
	}
	return u + sig.Path(), nil
}

// Environment variable names.
const envPrefix = "OTEL_EXPORTER_OTLP_"

// envSignal returns the variable name of setting for sig, e.g. OTEL_EXPORTER_OTLP_LOGS_ENDPOINT.
func envSignal(sig signal.Signal, setting string) string {
	return envPrefix + strings.ToUpper(sig.String()) + "_" + setting
}

// ApplyEnv fills the fields of c that are still zero from the OpenTelemetry exporter
// environment (getenv is os.Getenv outside tests), so flags, bound into c first, win. It reads
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL) and the per-signal _ENDPOINTs (used as given, and
// only when no endpoint flag was given), _HEADERS (general and per signal; flags override a
// header of the same name), _COMPRESSION, _TIMEOUT (milliseconds), _CERTIFICATE,
// _CLIENT_CERTIFICATE, _CLIENT_KEY, _INSECURE and _PROTOCOL. The per-signal forms of the
// settings that load applies to every signal are accepted when they agree for the signals of
// the mix.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	mix := c.Mix
	if mix == (Mix{}) {
		mix = DefaultMix
	}
	sigs := mix.Signals()
	// setting returns the value of a setting, the per-signal ones (when they agree) over the
	// general one.
	setting := func(name string) (string, string, error) {
		v, from := getenv(envPrefix+name), envPrefix+name
		var first string
		for _, sig := range sigs {
			sv := getenv(envSignal(sig, name))
			if sv == "" {
				continue
			}
			if first != "" && sv != getenv(first) {
				return "", "", fmt.Errorf("%w: %s and %s differ; load applies one %s to every signal", ErrInvalidConfig, first, envSignal(sig, name), strings.ToLower(name))
			}
			first, v, from = envSignal(sig, name), sv, envSignal(sig, name)
		}
		return strings.TrimSpace(v), from, nil
	}
	if c.Endpoint == "" {
		c.Endpoint = getenv(envPrefix + "ENDPOINT")
		for _, sig := range signal.All() {
			if c.SignalEndpoints[sig.Index()] == "" {
				c.SignalEndpoints[sig.Index()] = getenv(envSignal(sig, "ENDPOINT"))
			}
		}
	}
	if err := c.envHeaders(getenv); err != nil {
		return err
	}
	apply := []struct {
		name string
		set  func(v, from string) error
	}{
		{"PROTOCOL", func(v, _ string) error {
			c.Protocol = cmp.Or(c.Protocol, Protocol(v))
			return nil
		}},
		{"COMPRESSION", func(v, _ string) error {
			c.Payload.Compression = cmp.Or(c.Payload.Compression, otlpgen.Compression(v))
			return nil
		}},
		{"TIMEOUT", func(v, from string) error {
			ms, err := strconv.Atoi(v)
			if err != nil || ms < 0 {
				return fmt.Errorf("%w: %s=%q: want milliseconds", ErrInvalidConfig, from, v)
			}
			c.Timeout = cmp.Or(c.Timeout, time.Duration(ms)*time.Millisecond)
			return nil
		}},
		{"CERTIFICATE", func(v, _ string) error { c.TLS.CAFile = cmpOr(c.TLS.CAFile, v); return nil }},
		{"CLIENT_CERTIFICATE", func(v, _ string) error { c.TLS.CertFile = cmpOr(c.TLS.CertFile, v); return nil }},
		{"CLIENT_KEY", func(v, _ string) error { c.TLS.KeyFile = cmpOr(c.TLS.KeyFile, v); return nil }},
		{"INSECURE", func(v, from string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%w: %s=%q: want true or false", ErrInvalidConfig, from, v)
			}
			c.Insecure = c.Insecure || b
			return nil
		}},
	}
	for _, a := range apply {
		v, from, err := setting(a.name)
		if err != nil {
			return err
		}
		if v == "" {
			continue
		}
		if err := a.set(v, from); err != nil {
			return err
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// envHeaders merges OTEL_EXPORTER_OTLP_HEADERS and the per-signal _HEADERS into
// c.SignalHeaders; c.Header (the flags) is applied over them when requests are built.
func (c *Config) envHeaders(getenv func(string) string) error {
	general, err := parseEnvHeaders(getenv(envPrefix + "HEADERS"))
	if err != nil {
		return fmt.Errorf("%w: %sHEADERS: %v", ErrInvalidConfig, envPrefix, err)
	}
	for _, sig := range signal.All() {
		h := general.Clone()
		own, err := parseEnvHeaders(getenv(envSignal(sig, "HEADERS")))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidConfig, envSignal(sig, "HEADERS"), err)
		}
		for k, v := range own {
			h[k] = v
		}
		if len(h) > 0 && c.SignalHeaders[sig.Index()] == nil {
			c.SignalHeaders[sig.Index()] = h
		}
	}
	return nil
}

// parseEnvHeaders parses the exporters' header list: comma-separated key=value pairs whose
// values are URL-encoded (the W3C Baggage format).
func parseEnvHeaders(s string) (http.Header, error) {
	h := http.Header{}
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %q: want key=value", part)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("entry %q: %v", part, err)
		}
		h.Add(k, val)
	}
	return h, nil
}

// headersFor returns the request headers of sig: those from the environment, with the flags'
// over them.
func (c Config) headersFor(sig signal.Signal) http.Header {
	h := c.SignalHeaders[sig.Index()].Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range c.Header {
		h[k] = v
	}
	return h
}
