package ingestsrv

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/store"
	"github.com/otelbench/otelbench/internal/validtest"
)

func TestAuth(t *testing.T) {
	const token = "s3cret-token"
	for _, ingestAuth := range []bool{false, true} {
		name := "api only"
		if ingestAuth {
			name = "api and ingest"
		}
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, Config{AuthToken: token, AuthIngest: ingestAuth, Pprof: true})
			ts.Mount("GET /api/v1/hello", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "hello")
			}))
			logs := encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingProto)
			ingestWant := http.StatusOK
			if ingestAuth {
				ingestWant = http.StatusUnauthorized
			}
			tests := []struct {
				name, method, path, auth string
				want                     int
			}{
				{"healthz open", "GET", "/healthz", "", 200},
				{"stats no token", "GET", "/api/v1/stats", "", 401},
				{"stats wrong token", "GET", "/api/v1/stats", "Bearer nope", 401},
				{"stats token prefix", "GET", "/api/v1/stats", "Bearer " + token[:4], 401},
				{"stats basic scheme", "GET", "/api/v1/stats", "Basic " + token, 401},
				{"stats token", "GET", "/api/v1/stats", "Bearer " + token, 200},
				{"stats lowercase scheme", "GET", "/api/v1/stats", "bearer " + token, 200},
				{"metrics no token", "GET", "/metrics", "", 401},
				{"metrics token", "GET", "/metrics", "Bearer " + token, 200},
				{"pprof no token", "GET", "/debug/pprof/", "", 401},
				{"pprof token", "GET", "/debug/pprof/", "Bearer " + token, 200},
				{"mounted no token", "GET", "/api/v1/hello", "", 401},
				{"mounted token", "GET", "/api/v1/hello", "Bearer " + token, 200},
				{"ingest no token", "POST", "/v1/logs", "", ingestWant},
				{"ingest token", "POST", "/v1/logs", "Bearer " + token, 200},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var hdr []string
					if tt.auth != "" {
						hdr = []string{"Authorization", tt.auth}
					}
					var body io.Reader
					if tt.method == "POST" {
						body = bytesReader(logs)
					}
					resp, err := send(nil, tt.method, ts.url+tt.path, ctProto, "", body, hdr...)
					if err != nil {
						t.Fatal(err)
					}
					wantStatus(t, resp, tt.want)
					if tt.want == 401 && !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("WWW-Authenticate = %q", resp.header.Get("WWW-Authenticate"))
					}
				})
			}
			if got := getStats(t, ts.url, "Authorization", "Bearer "+token).Rejections["unauthorized"]; got == 0 {
				t.Error("unauthorized rejections not counted")
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	validtest.Run(t, []validtest.Case[Config]{
		{"zero", Config{}, nil},
		{"auth ingest without token", Config{AuthIngest: true}, validtest.Invalid},
		{"bad sync", Config{Config: store.Config{Sync: "sometimes"}}, validtest.Invalid},
		{"negative", Config{MaxBody: -1}, validtest.Invalid},
		{"budget below one body", Config{MaxBody: 8 << 20, InflightBytes: 16 << 20}, validtest.Invalid},
		{"token", Config{AuthToken: "s3cret"}, nil},
		{"token with a trailing newline", Config{AuthToken: "s3cret\n"}, validtest.Invalid},
		{"token with a leading space", Config{AuthToken: " s3cret"}, validtest.Invalid},
		{"negative per-source cap", Config{MaxConnsPerSource: -1}, validtest.Invalid},
	})
}
