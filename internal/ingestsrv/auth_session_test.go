package ingestsrv

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
)

const sessionToken = "s3cret-session-token"

// sessionServer is a token-protected server with stand-ins mounted where the
// dashboard and the query API go (internal/dashboard tests the real ones).
func sessionServer(t *testing.T) *testServer {
	t.Helper()
	ts := startServer(t, Config{AuthToken: sessionToken, AuthIngest: true})
	for _, p := range []string{"GET /ui/{$}", "GET /ui/logs", "GET /api/v1/logs"} {
		ts.Mount(p, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "page") }))
	}
	return ts
}

// noRedirect is a client that shows redirects instead of following them,
// with its own cookie jar.
func noRedirect(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func login(t *testing.T, c *http.Client, base, token string, hdr ...string) *http.Response {
	t.Helper()
	form := url.Values{"token": {token}, "next": {"/ui/logs?service=a"}}
	req, err := http.NewRequest(http.MethodPost, base+LoginPath, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return doDrained(t, c, req, hdr...)
}

func getStatus(t *testing.T, c *http.Client, u string, hdr ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return doDrained(t, c, req, hdr...).StatusCode
}

// doDrained sends req through c with the header pairs hdr (name, value, ...), reads the body
// away and closes it.
func doDrained(t *testing.T, c *http.Client, req *http.Request, hdr ...string) *http.Response {
	t.Helper()
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	return nil
}

func TestLoginSession(t *testing.T) {
	ts := sessionServer(t)
	c := noRedirect(t)

	// Before logging in: API 401, browser navigation to the login page.
	if got := getStatus(t, c, ts.url+"/api/v1/logs"); got != http.StatusUnauthorized {
		t.Errorf("API without session: %d, want 401", got)
	}
	if got := getStatus(t, c, ts.url+"/ui/", "Accept", "text/html"); got != http.StatusSeeOther {
		t.Errorf("navigation without session: %d, want 303 to the login page", got)
	}
	if got := getStatus(t, c, ts.url+LoginPath); got != http.StatusOK {
		t.Errorf("login form: %d", got)
	}

	resp := login(t, c, ts.url, sessionToken, "Origin", ts.url, "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/logs?service=a" {
		t.Fatalf("login: %d Location %q, want 303 to the next page", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := sessionCookie(resp)
	if ck == nil {
		t.Fatal("login set no session cookie")
	}
	if strings.Contains(ck.Value, sessionToken) || ck.Value == "" {
		t.Errorf("cookie value %q carries the token", ck.Value)
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
		t.Errorf("cookie attributes: HttpOnly=%v SameSite=%v Path=%q Secure=%v (plain HTTP)", ck.HttpOnly, ck.SameSite, ck.Path, ck.Secure)
	}

	// The cookie alone opens the dashboard, the query API and the stats.
	for _, p := range []string{"/ui/", "/ui/logs", "/api/v1/logs", "/api/v1/stats"} {
		if got := getStatus(t, c, ts.url+p, "Accept", "text/html"); got != http.StatusOK {
			t.Errorf("GET %s with the session: %d, want 200", p, got)
		}
	}
	// Not /metrics or ingest: those stay bearer-only.
	if got := getStatus(t, c, ts.url+"/metrics"); got != http.StatusUnauthorized {
		t.Errorf("/metrics with only the session: %d, want 401", got)
	}
	logs := encode(t, otlptest.Logs(0, 1), otlpcodec.EncodingProto)
	ingest := func(hdr ...string) int {
		req, _ := http.NewRequest(http.MethodPost, ts.url+"/v1/logs", bytesReader(logs))
		req.Header.Set("Content-Type", ctProto)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		r, err := c.Do(req) // the jar sends the session cookie
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	if got := ingest(); got != http.StatusUnauthorized {
		t.Errorf("ingest with only the session cookie: %d, want 401", got)
	}
	if got := ingest("Authorization", "Bearer "+sessionToken); got != http.StatusOK {
		t.Errorf("ingest with the bearer token: %d, want 200", got)
	}

	// Logout clears the cookie; the API is closed again.
	req, _ := http.NewRequest(http.MethodPost, ts.url+LogoutPath, nil)
	req.Header.Set("Origin", ts.url)
	out, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if ck := sessionCookie(out); out.StatusCode != http.StatusSeeOther || ck == nil || ck.MaxAge >= 0 {
		t.Errorf("logout: %d cookie %v, want 303 and an expired cookie", out.StatusCode, ck)
	}
	if got := getStatus(t, c, ts.url+"/api/v1/logs"); got != http.StatusUnauthorized {
		t.Errorf("API after logout: %d, want 401", got)
	}
}

func TestLoginRefused(t *testing.T) {
	ts := sessionServer(t)
	tests := []struct {
		name, token string
		hdr         []string
		want        int
	}{
		{"wrong token", "nope", nil, http.StatusUnauthorized},
		{"token prefix", sessionToken[:5], nil, http.StatusUnauthorized},
		{"empty token", "", nil, http.StatusUnauthorized},
		{"cross-site by Sec-Fetch-Site", sessionToken, []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"}, http.StatusForbidden},
		{"same-site other origin", sessionToken, []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"cross-site by Origin", sessionToken, []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"opaque Origin", sessionToken, []string{"Origin", "null"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := noRedirect(t)
			resp := login(t, c, ts.url, tt.token, tt.hdr...)
			if resp.StatusCode != tt.want {
				t.Errorf("login: %d, want %d", resp.StatusCode, tt.want)
			}
			if ck := sessionCookie(resp); ck != nil {
				t.Errorf("refused login set a cookie: %v", ck)
			}
			if got := getStatus(t, c, ts.url+"/api/v1/logs"); got != http.StatusUnauthorized {
				t.Errorf("API after a refused login: %d, want 401", got)
			}
		})
	}
}

func TestSessionCookieChecks(t *testing.T) {
	ts := sessionServer(t)
	b := newBearer(sessionToken)
	valid := b.newSession(time.Now().Add(time.Hour))
	exp, sig, _ := strings.Cut(valid, ".")
	tests := []struct {
		name, value string
		want        int
	}{
		{"valid", valid, http.StatusOK},
		{"the raw token", sessionToken, http.StatusUnauthorized},
		{"expired", b.newSession(time.Now().Add(-time.Second)), http.StatusUnauthorized},
		{"expiry moved", "9" + exp + "." + sig, http.StatusUnauthorized},
		{"other token's", newBearer("other").newSession(time.Now().Add(time.Hour)), http.StatusUnauthorized},
		{"no signature", exp, http.StatusUnauthorized},
		{"garbage", "x.y", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := getStatus(t, http.DefaultClient, ts.url+"/api/v1/logs", "Cookie", SessionCookie+"="+tt.value)
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLoginRedirects(t *testing.T) {
	ts := sessionServer(t)
	c := noRedirect(t)
	nav := func(path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, ts.url+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A navigation keeps where it was going; an API call or EventSource
	// (Sec-Fetch-Mode cors) gets 401, even with text/html acceptable.
	if r := nav("/ui/logs?q=x", "Sec-Fetch-Mode", "navigate"); r.StatusCode != http.StatusSeeOther ||
		r.Header.Get("Location") != LoginPath+"?next="+url.QueryEscape("/ui/logs?q=x") {
		t.Errorf("navigation: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	if r := nav("/ui/logs", "Sec-Fetch-Mode", "cors", "Accept", "text/html"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("fetch: %d, want 401", r.StatusCode)
	}
	if r := nav("/api/v1/logs", "Accept", "text/html"); r.StatusCode != http.StatusUnauthorized ||
		r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("API navigation: %d %q, want 401 JSON", r.StatusCode, r.Header.Get("Content-Type"))
	}
	for next, want := range map[string]string{
		"/ui/traces?x=1":        "/ui/traces?x=1",
		"//evil.example/":       "/ui/",
		"https://evil.example/": "/ui/",
		"/ui/\\evil":            "/ui/",
		"/api/v1/logs":          "/ui/",
		LoginPath:               "/ui/",
		"":                      "/ui/",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

func TestNoLoginWithoutToken(t *testing.T) {
	ts := startServer(t, Config{})
	if got := getStatus(t, http.DefaultClient, ts.url+LoginPath); got != http.StatusNotFound {
		t.Errorf("login page without a token: %d, want 404", got)
	}
}
