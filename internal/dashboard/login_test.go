package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/collector/pdata/plog"
	"golang.org/x/sync/errgroup"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/query/querytest"
	"github.com/otelbench/otelbench/internal/store"
)

// authEnv is env on a real ingest server; stop cancels it and returns what its serve and live
// tail returned (once, however often it is called).
type authEnv struct {
	*env
	stop func() error
}

// newAuthEnv serves the API and the dashboard the way `otelbench serve`
// does: Attach on a real ingest server that requires token.
func newAuthEnv(t *testing.T, token string) *authEnv {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := ingestsrv.New(context.Background(), ingestsrv.Config{Config: store.Config{Dir: t.TempDir(), Logger: logger}, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	runTail, err := Attach(srv.Store().ReadDB(), srv.Store().ProjectedNotify, srv.Mount, logger)
	if err != nil {
		_ = srv.Close(context.Background())
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close(context.Background())
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return runTail(gctx) })
	g.Go(func() error { return srv.Serve(gctx, ln) })
	e := &authEnv{env: &env{st: srv.Store(), base: "http://" + ln.Addr().String()}}
	e.stop = sync.OnceValue(func() error {
		cancel()
		return g.Wait()
	})
	t.Cleanup(func() {
		if err := e.stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return e
}

// TestLoginCookieOpensDashboard logs in over plain HTTP and then reaches the
// real dashboard, query API and live tail with the session cookie alone.
func TestLoginCookieOpensDashboard(t *testing.T) {
	const token = "s3cret-token"
	e := newAuthEnv(t, token)
	seed(t, e.env)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := c.Get(e.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/api/v1/logs"); code != http.StatusUnauthorized {
		t.Fatalf("API before login: %d, want 401", code)
	}

	resp, err := c.PostForm(e.base+ingestsrv.LoginPath, url.Values{"token": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp, err = c.PostForm(e.base+ingestsrv.LoginPath, url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if v := resp.Cookies()[0].Value; strings.Contains(v, token) {
		t.Errorf("cookie %q carries the token", v)
	}

	for _, tc := range []struct{ path, want string }{
		{"/ui/", "checkout"},
		{"/ui/logs", "order placed"},
		{"/api/v1/logs", "order placed"},
	} {
		if code, body := get(tc.path); code != http.StatusOK || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s with the cookie: %d, body lacks %q: %.200s", tc.path, code, tc.want, body)
		}
	}
	stream, err := c.Get(e.base + "/api/v1/logs/stream")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := stream.Body.Read(buf)
	stream.Body.Close()
	if stream.StatusCode != http.StatusOK || err != nil || !strings.Contains(string(buf[:n]), "subscribed") {
		t.Errorf("tail with the cookie: %d %q %v", stream.StatusCode, buf[:n], err)
	}

	// A logged-in browser sees a logout button; a bearer-token client,
	// which has no session to end, does not.
	if _, body := get("/ui/"); !strings.Contains(body, `action="`+ingestsrv.LogoutPath+`"`) {
		t.Errorf("dashboard with a session lacks the logout form: %.300s", body)
	}
	req, err := http.NewRequest(http.MethodGet, e.base+"/ui/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `id="logout"`) {
		t.Errorf("bearer client: %d, logout form shown: %v", resp.StatusCode, strings.Contains(string(b), `id="logout"`))
	}

	resp, err = c.PostForm(e.base+ingestsrv.LogoutPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != ingestsrv.LoginPath {
		t.Fatalf("logout: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, _ := get("/api/v1/logs"); code != http.StatusUnauthorized {
		t.Errorf("API after logout: %d, want 401", code)
	}
	if code, _ := get("/ui/"); code == http.StatusOK {
		t.Errorf("dashboard after logout: %d, want it refused", code)
	}
}

// TestBrowserLoginLiveTail: with a token set, a browser opening the
// dashboard lands on the login form, logs in, and the live tail (an
// EventSource, which cannot send headers) still streams a log sent after
// the page opened.
func TestBrowserLoginLiveTail(t *testing.T) {
	const token = "browser-s3cret"
	e := newAuthEnv(t, token)
	seed(t, e.env)
	b := newBrowser(t)

	b.do(t, chromedp.Navigate(e.base+"/ui/logs?service=checkout"),
		chromedp.WaitVisible(chromedp.CSS("#login")))
	if u := eval[string](t, b, `location.pathname`); u != ingestsrv.LoginPath {
		t.Fatalf("unauthenticated navigation landed on %q, want the login page", u)
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS("#token"), "wrong"),
		chromedp.Submit(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#login-error")))
	if n := eval[int](t, b, `document.querySelectorAll("#tail-toggle").length`); n != 0 {
		t.Fatal("a wrong token opened the dashboard")
	}

	b.do(t, chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Submit(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#tail-toggle")))
	if u := eval[string](t, b, `location.pathname + location.search`); u != "/ui/logs?service=checkout" {
		t.Errorf("after login the browser is at %q, want the page it asked for", u)
	}
	if c := eval[string](t, b, `document.cookie`); c != "" {
		t.Errorf("the session cookie is visible to scripts: %q", c)
	}
	b.do(t, chromedp.Click(chromedp.CSS("#tail-toggle")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-tail="live"]`)))
	probe := fmt.Sprintf("tail after login %d", time.Now().UnixNano())
	querytest.AppendLogs(t, e.st,
		querytest.LogSpec{Service: "checkout", Sev: plog.SeverityNumberWarn, Body: probe, At: time.Now()})
	b.do(t, chromedp.WaitVisible(chromedp.CSS("#tail-rows tr.tailed")))
	if got := b.text(t, "#tail-rows"); !strings.Contains(got, probe) {
		t.Errorf("tailed rows %q lack the probe", got)
	}

	// The logout button ends the session: back on the login form, and the
	// dashboard no longer opens.
	b.do(t, chromedp.Click(chromedp.CSS("#logout button")),
		chromedp.WaitVisible(chromedp.CSS("#login")))
	b.do(t, chromedp.Navigate(e.base+"/ui/logs"), chromedp.WaitVisible(chromedp.CSS("#login")))
	if u := eval[string](t, b, `location.pathname`); u != ingestsrv.LoginPath {
		t.Errorf("after logout the dashboard opened at %q, want the login page", u)
	}
}
