package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// otlpMux answers 200 on the three OTLP/HTTP paths only, as an OTLP server does.
func otlpMux() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/logs", "/v1/metrics", "/v1/traces"} {
		mux.HandleFunc("POST "+p, func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	}
	return mux
}

// TestLoadExitCodesByCause: the mistakes people make first exit 1 with the cause and the fix,
// whichever sender carries the requests.
func TestLoadExitCodesByCause(t *testing.T) {
	plain := httptest.NewServer(otlpMux())
	defer plain.Close()
	tlsSrv := httptest.NewUnstartedServer(otlpMux())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name     string
		args     []string
		code     int
		want     []string
		wantNone string
	}{
		{"per-signal path as the endpoint", []string{"--endpoint", plain.URL + "/v1/logs"}, 1,
			[]string{"HTTP 404", "the endpoint is the base URL, e.g. http://host:4318; the per-signal paths are added", "drop /v1/logs"}, ""},
		{"per-signal path, open model", []string{"--endpoint", plain.URL + "/v1/logs", "--rate", "200"}, 1,
			[]string{"HTTP 404", "the endpoint is the base URL"}, ""},
		{"https to plain http", []string{"--endpoint", strings.Replace(plain.URL, "http:", "https:", 1)}, 1,
			[]string{"TLS to a plain-HTTP server", "use http://"}, ""},
		{"http to a TLS server", []string{"--endpoint", tlsSrv.URL[len("https://"):], "--insecure"}, 1,
			[]string{"plain HTTP to a TLS server", "use https://"}, ""},
		{"untrusted certificate", []string{"--endpoint", tlsSrv.URL}, 1,
			[]string{"TLS certificate not trusted", "--ca-file"}, ""},
		{"connection refused", []string{"--endpoint", "http://" + refused}, 1,
			[]string{"connection refused", "is the server up"}, ""},
		{"connection refused, net/http", []string{"--endpoint", "http://" + refused, "--sender", "net-http"}, 1,
			[]string{"connection refused"}, ""},
		{"test server, verification off", []string{"--endpoint", tlsSrv.URL, "--insecure-skip-verify"}, 0, nil, "failures by cause"},
		{"all fine", []string{"--endpoint", plain.URL}, 0, nil, "failures by cause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"load", "--requests", "12", "--records", "2", "--concurrency", "2", "--no-progress"}, tt.args...)
			out := wantRun(t, args, tt.code, tt.want...)
			if tt.wantNone != "" && strings.Contains(out, tt.wantNone) {
				t.Errorf("output has %q:\n%s", tt.wantNone, out)
			}
		})
	}
}

// TestLoadRetryableErrors: 503s fail the run by --min-success unless --retry gets them
// through; they are not fatal on their own.
func TestLoadRetryableErrors(t *testing.T) {
	var mu sync.Mutex
	seen := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen++
		n := seen
		mu.Unlock()
		if n%2 == 0 { // every other attempt is shed
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	base := []string{"load", "--endpoint", srv.URL, "--requests", "20", "--records", "1", "--concurrency", "1", "--no-progress"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no retry", nil, 1, "fewer than --min-success 99%"},
		{"no retry, lower bar", []string{"--min-success", "0.4"}, 0, "HTTP 503"},
		{"retry", []string{"--retry", "3", "--retry-max-wait", "1ms"}, 0, "100.00% of requests succeeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRun(t, append(base, tt.args...), tt.code, tt.want)
		})
	}
}

// TestLoadEnvironment: the exporter variables configure the run, per-signal endpoints are
// used as given, and flags win.
func TestLoadEnvironment(t *testing.T) {
	type seenReq struct{ path, tenant, ctype, encoding string }
	var mu sync.Mutex
	var seen []seenReq
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, seenReq{r.URL.Path, r.Header.Get("X-Tenant"), r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding")})
		mu.Unlock()
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want seenReq // of the traces requests
	}{
		{"base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}, nil,
			seenReq{"/v1/traces", "", "application/x-protobuf", ""}},
		{"per-signal endpoint as given", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/custom/spans"}, nil,
			seenReq{"/custom/spans", "", "application/x-protobuf", ""}},
		{"flag over environment", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": other.URL,
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": other.URL + "/x"}, []string{"--endpoint", srv.URL},
			seenReq{"/v1/traces", "", "application/x-protobuf", ""}},
		{"headers, compression, protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
			"OTEL_EXPORTER_OTLP_HEADERS": "X-Tenant=a%20b", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, nil,
			seenReq{"/v1/traces", "a b", "application/json", "gzip"}},
		{"per-signal headers, flag header wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
			"OTEL_EXPORTER_OTLP_HEADERS": "X-Tenant=env", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "X-Tenant=traces"},
			[]string{"--header", "X-Tenant=flag"}, seenReq{"/v1/traces", "flag", "application/x-protobuf", ""}},
		{"per-signal headers", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
			"OTEL_EXPORTER_OTLP_HEADERS": "X-Tenant=env", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "X-Tenant=traces"},
			nil, seenReq{"/v1/traces", "traces", "application/x-protobuf", ""}},
		{"host:port with insecure", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.Listener.Addr().String(),
			"OTEL_EXPORTER_OTLP_INSECURE": "true"}, []string{"--compression", "none"},
			seenReq{"/v1/traces", "", "application/x-protobuf", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			args := append([]string{"load", "--requests", "6", "--records", "2", "--no-progress"}, tt.args...)
			if code, out := runCLI(t, args...); code != 0 {
				t.Fatalf("exit %d, want 0; output:\n%s", code, out)
			}
			mu.Lock()
			defer mu.Unlock()
			var traces []seenReq
			for _, s := range seen {
				if s.path != "/v1/logs" && s.path != "/v1/metrics" {
					traces = append(traces, s)
				}
			}
			if len(traces) != 2 {
				t.Fatalf("server saw %d trace requests (%v), want 2", len(traces), seen)
			}
			for _, got := range traces {
				if got != tt.want {
					t.Errorf("trace request %+v, want %+v", got, tt.want)
				}
			}
		})
	}
	t.Run("bad timeout", func(t *testing.T) {
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "10s")
		wantRun(t, []string{"load", "--requests", "1", "--endpoint", srv.URL}, 2, "milliseconds")
	})
}
