package loadgen

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// TestApplyEnv: the exporter variables fill what the flags left unset, per-signal forms over
// the general ones, and flags win.
func TestApplyEnv(t *testing.T) {
	tests := []struct {
		name  string
		flags Config
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"endpoint and per-signal endpoint", Config{}, map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://logs:9000/ingest"},
			func(t *testing.T, c Config) {
				urls := [3]string{}
				for _, sig := range signal.All() {
					urls[sig.Index()], _ = c.signalURL(sig)
				}
				want := [3]string{"http://logs:9000/ingest", "http://col:4318/v1/metrics", "http://col:4318/v1/traces"}
				if urls != want {
					t.Errorf("urls %v, want %v", urls, want)
				}
			}},
		{"endpoint flag wins over both", Config{Endpoint: "http://flag:4318"}, map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://logs:9000/ingest"},
			func(t *testing.T, c Config) {
				if u, _ := c.signalURL(signal.Logs); u != "http://flag:4318/v1/logs" {
					t.Errorf("logs url %s, want the flag's", u)
				}
			}},
		{"host:port is https unless insecure", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "col:4318"},
			func(t *testing.T, c Config) {
				if u, _ := c.signalURL(signal.Traces); u != "https://col:4318/v1/traces" {
					t.Errorf("traces url %s, want https", u)
				}
			}},
		{"insecure host:port", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "col:4318", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
			func(t *testing.T, c Config) {
				if u, _ := c.signalURL(signal.Traces); u != "http://col:4318/v1/traces" {
					t.Errorf("traces url %s, want http", u)
				}
			}},
		{"settings", Config{}, map[string]string{
			"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
			"OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/c.pem", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/k.pem"},
			func(t *testing.T, c Config) {
				wantTLS := TLSConfig{CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem"}
				if c.Timeout != 2500*time.Millisecond || c.Protocol != ProtocolHTTPJSON || c.TLS != wantTLS || c.Payload.Compression != otlpgen.CompressionGzip {
					t.Errorf("timeout %v protocol %s tls %+v compression %s; want 2.5s, http/json, %+v, gzip",
						c.Timeout, c.Protocol, c.TLS, c.Payload.Compression, wantTLS)
				}
			}},
		{"flags win over settings", Config{Timeout: time.Second, Protocol: ProtocolHTTPProtobuf, TLS: TLSConfig{CAFile: "/flag.pem"}},
			map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem"},
			func(t *testing.T, c Config) {
				if c.Timeout != time.Second || c.Protocol != ProtocolHTTPProtobuf || c.TLS.CAFile != "/flag.pem" {
					t.Errorf("timeout %v protocol %s ca %s, want the flags'", c.Timeout, c.Protocol, c.TLS.CAFile)
				}
			}},
		{"per-signal settings that agree", Config{}, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "100",
			"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "700", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "700", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "700"},
			func(t *testing.T, c Config) {
				if c.Timeout != 700*time.Millisecond {
					t.Errorf("timeout %v, want the per-signal 700ms", c.Timeout)
				}
			}},
		{"headers", Config{Header: http.Header{"X-B": {"flag"}}}, map[string]string{
			"OTEL_EXPORTER_OTLP_HEADERS": "X-A=1,X-B=env", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "X-A=2"},
			func(t *testing.T, c Config) {
				l, m := c.headersFor(signal.Logs), c.headersFor(signal.Metrics)
				if l.Get("X-A") != "1" || m.Get("X-A") != "2" || l.Get("X-B") != "flag" || m.Get("X-B") != "flag" {
					t.Errorf("logs headers %v, metrics headers %v", l, m)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.flags
			if err := c.ApplyEnv(func(k string) string { return tt.env[k] }); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestApplyEnvRejects(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"timeout not ms":          {"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
		"insecure not bool":       {"OTEL_EXPORTER_OTLP_INSECURE": "maybe"},
		"bad headers":             {"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		"per-signal disagreement": {"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"},
		"per-signal bad headers":  {"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=%zz"},
	} {
		var c Config
		if err := c.ApplyEnv(func(k string) string { return env[k] }); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: ApplyEnv = %v, want ErrInvalidConfig", name, err)
		}
	}
	var c Config
	if err := c.ApplyEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}[k]
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || c.Protocol != ProtocolGRPC {
		t.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: protocol %q, Validate = %v; want grpc, nil", c.Protocol, err)
	}
}
