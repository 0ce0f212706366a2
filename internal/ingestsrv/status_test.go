package ingestsrv

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
)

const (
	ctProto = otlpcodec.ContentTypeProto
	ctJSON  = otlpcodec.ContentTypeJSON
)

// TestStatusCodes covers every answer but 503 and 507 (own tests): status,
// rejection counter, and the google.rpc.Status body in the request's
// encoding.
func TestStatusCodes(t *testing.T) {
	ts := startServer(t, Config{MaxBody: 64 << 10})
	logs := encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingProto)
	big := encode(t, otlptest.Logs(0, 1000), otlpcodec.EncodingProto) // > 64 KiB
	bigGzip, _ := otlpcodec.Compress(nil, big, otlpcodec.CompressionGzip)
	if len(big) <= 64<<10 || len(bigGzip) > 64<<10 {
		t.Fatalf("fixture sizes: %d raw, %d gzip; want > and <= 64 KiB", len(big), len(bigGzip))
	}
	tests := []struct {
		name       string
		method     string
		path       string
		ct, ce     string
		body       []byte
		chunked    bool
		status     int
		reason     string // rejection counter that must move ("" for 200)
		statusEnc  otlpcodec.Encoding
		statusCode int32
	}{
		{name: "ok proto", path: "/v1/logs", ct: ctProto, body: logs, status: 200},
		{name: "ok proto with charset", path: "/v1/logs", ct: ctProto + "; charset=binary", body: logs, status: 200},
		{name: "empty request", path: "/v1/traces", ct: ctProto, body: nil, status: 200},
		{name: "undecodable proto", path: "/v1/logs", ct: ctProto, body: []byte("\xff\xfe garbage"),
			status: 400, reason: "decode", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "undecodable json", path: "/v1/metrics", ct: ctJSON, body: []byte(`{"resourceMetrics":`),
			status: 400, reason: "decode", statusEnc: otlpcodec.EncodingJSON, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "corrupt gzip", path: "/v1/logs", ct: ctJSON, ce: "gzip", body: []byte("not gzip"),
			status: 400, reason: "decode", statusEnc: otlpcodec.EncodingJSON, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "GET", method: http.MethodGet, path: "/v1/logs", ct: ctProto,
			status: 405, reason: "method", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeUnimplemented},
		{name: "PUT json", method: http.MethodPut, path: "/v1/traces", ct: ctJSON, body: []byte("{}"),
			status: 405, reason: "method", statusEnc: otlpcodec.EncodingJSON, statusCode: otlpcodec.CodeUnimplemented},
		{name: "too large by Content-Length", path: "/v1/logs", ct: ctProto, body: big,
			status: 413, reason: "too_large", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "too large chunked", path: "/v1/logs", ct: ctProto, body: big, chunked: true,
			status: 413, reason: "too_large", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "too large after gunzip", path: "/v1/logs", ct: ctProto, ce: "gzip", body: bigGzip,
			status: 413, reason: "too_large", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "text/plain", path: "/v1/logs", ct: "text/plain", body: logs,
			status: 415, reason: "unsupported_media", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "no content type", path: "/v1/logs", body: logs,
			status: 415, reason: "unsupported_media", statusEnc: otlpcodec.EncodingProto, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "brotli", path: "/v1/logs", ct: ctJSON, ce: "br", body: logs,
			status: 415, reason: "unsupported_media", statusEnc: otlpcodec.EncodingJSON, statusCode: otlpcodec.CodeInvalidArgument},
		{name: "unknown path", path: "/v1/profiles", ct: ctProto, body: logs, status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := getStats(t, ts.url)
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: Transfer-Encoding: chunked
			}
			resp, err := send(nil, method, ts.url+tt.path, tt.ct, tt.ce, body)
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, resp, tt.status)
			after := getStats(t, ts.url)
			if tt.reason != "" {
				if got := after.Rejections[tt.reason] - before.Rejections[tt.reason]; got != 1 {
					t.Errorf("rejections[%s] moved by %d, want 1", tt.reason, got)
				}
			}
			if tt.status == http.StatusMethodNotAllowed && resp.header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow = %q, want POST", resp.header.Get("Allow"))
			}
			if tt.statusEnc == 0 {
				return
			}
			if got := resp.header.Get("Content-Type"); got != tt.statusEnc.ContentType() {
				t.Errorf("Content-Type = %q, want %q", got, tt.statusEnc.ContentType())
			}
			code, msg, err := otlpcodec.ParseStatus(tt.statusEnc, resp.body)
			if err != nil {
				t.Fatalf("body %s is not a google.rpc.Status: %v", trim(resp.body), err)
			}
			if code != tt.statusCode || msg == "" {
				t.Errorf("google.rpc.Status code=%d message=%q, want code %d and a message", code, msg, tt.statusCode)
			}
		})
	}
}

// TestDecompressionBomb posts real 1 GiB bombs (1 MB gzip, 32 KB zstd) to a
// server with a 4 MiB limit: 413, and the bytes the whole process allocates
// meanwhile stay in the order of the limit, far from the gigabyte.
func TestDecompressionBomb(t *testing.T) {
	ts := startServer(t, Config{MaxBody: 4 << 20})
	for _, tt := range []struct{ file, ce string }{
		{"../otlpcodec/testdata/bomb-1GiB.gz", "gzip"},
		{"../otlpcodec/testdata/bomb-1GiB.zst", "zstd"},
	} {
		t.Run(tt.ce, func(t *testing.T) {
			bomb, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			resp := post(t, nil, ts.url+"/v1/logs", ctProto, tt.ce, bomb)
			runtime.ReadMemStats(&after)
			wantStatus(t, resp, http.StatusRequestEntityTooLarge)
			// Client and server share this process: the bomb file, its
			// copy in transit, the 4 MiB buffer grown by doubling, decoder
			// state. Unbounded decompression would allocate 1 GiB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("process allocated %d MiB while rejecting the bomb, want <= 64 MiB", alloc>>20)
			}
			if after.HeapInuse > 256<<20 {
				t.Errorf("heap in use %d MiB after the bomb", after.HeapInuse>>20)
			}
		})
	}
}
