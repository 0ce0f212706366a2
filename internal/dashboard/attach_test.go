package dashboard

import (
	"context"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
)

// TestAttachBehindIngestAuth wires the API and dashboard into the real
// ingest server the way `otelbench serve` does and checks its bearer token
// guards them, and that the live tail ends when the server stops.
func TestAttachBehindIngestAuth(t *testing.T) {
	const token = "s3cret-token"
	e := newAuthEnv(t, token)
	base := e.base

	get := func(path, tok string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, tc := range []struct {
		path, tok string
		want      int
	}{
		{"/api/v1/logs", "", http.StatusUnauthorized},
		{"/api/v1/logs", "wrong", http.StatusUnauthorized},
		{"/api/v1/logs", token, http.StatusOK},
		{"/api/v1/traces", token, http.StatusOK},
		{"/api/v1/stats", token, http.StatusOK}, // ingestsrv's own, not shadowed
		{"/ui/", "", http.StatusUnauthorized},
		{"/ui/", token, http.StatusOK},
		{"/ui/static/tail.js", token, http.StatusOK},
		{"/", token, http.StatusFound},
	} {
		resp := get(tc.path, tc.tok)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s (token %q): got %d, want %d", tc.path, tc.tok, resp.StatusCode, tc.want)
		}
	}
	// An open live tail must not hold up the graceful shutdown.
	stream := get("/api/v1/logs/stream", token)
	defer stream.Body.Close()
	buf := make([]byte, 64)
	if n, err := stream.Body.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "subscribed") {
		t.Fatalf("stream: %q %v", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() { done <- e.stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop with a live tail open")
	}
}

// TestLogsPageTailKeepsAttributeFilters: the live tail the logs page opens
// filters as the page does, attribute filters included, and the API
// accepts its URL.
func TestLogsPageTailKeepsAttributeFilters(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.base + "/ui/logs?service=shop&resource.host.name=node-7&attr.http.route=%2Fcart&since=15m")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logs page: got %d, want 200: %s", resp.StatusCode, body)
	}
	m := regexp.MustCompile(`data-stream="([^"]*)"`).FindSubmatch(body)
	if m == nil {
		t.Fatal("logs page has no data-stream URL")
	}
	stream := html.UnescapeString(string(m[1]))
	want := "/api/v1/logs/stream?attr.http.route=%2Fcart&resource.host.name=node-7&service=shop"
	if stream != want {
		t.Errorf("stream URL: got %q, want %q", stream, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+stream, nil)
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	if sresp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(sresp.Body)
		t.Errorf("stream: got %d, want 200: %s", sresp.StatusCode, b)
	}
}

// TestLogsPageShowsResource: a log's resource attributes are the tooltip of
// its service cell.
func TestLogsPageShowsResource(t *testing.T) {
	e := newEnv(t)
	querytest.AppendLogs(t, e.st, querytest.LogSpec{Service: "shop", Sev: 9, Body: "hello", At: time.Now(),
		Resource: map[string]any{"host.name": "node-7"}})
	querytest.WaitProjected(t, e.st)
	resp, err := http.Get(e.base + "/ui/logs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`<td title="([^"]*)">shop</td>`).FindSubmatch(body)
	if m == nil || !strings.Contains(html.UnescapeString(string(m[1])), `"host.name":"node-7"`) {
		t.Errorf("logs page: no service cell titled with the resource; got %s", body)
	}
}
