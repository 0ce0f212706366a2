package ingestsrv

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The dashboard login. A browser cannot put a bearer header on a page
// navigation, and EventSource (the live tail) cannot set headers at all, so
// with a token set the dashboard trades the token once, on a login form, for
// a session cookie that the browser then sends by itself.
//
// The cookie is stateless: "<expiry unix seconds>.<HMAC-SHA256 keyed by the
// token over a fixed label and the expiry>". It is not the token and does
// not reveal it, it expires, it survives server restarts, and changing the
// token invalidates every session. Logout clears it in the browser; there
// is no server-side list to revoke one cookie early (rotate the token for
// that). It is HttpOnly, SameSite=Strict (never sent on cross-site
// requests, which is the CSRF defence of the cookie-authenticated routes,
// all of them reads), Path=/, and Secure when the request came over TLS.
const (
	// LoginPath serves the login form (GET) and takes the token (POST).
	LoginPath = dashboardPrefix + "login"
	// LogoutPath clears the session cookie (POST).
	LogoutPath = dashboardPrefix + "logout"
	// SessionCookie is the session cookie's name.
	SessionCookie = "otelbench_session"
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 12 * time.Hour

	dashboardPrefix = "/ui/"
	sessionLabel    = "otelbench dashboard session v1\x00"
	loginFailDelay  = 200 * time.Millisecond // slows guessing a little; the token's entropy is the real defence
	maxLoginBody    = 4 << 10
)

// newSession returns a cookie value valid until exp.
func (b *bearer) newSession(exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	return e + "." + base64.RawURLEncoding.EncodeToString(b.mac(e))
}

func (b *bearer) mac(exp string) []byte {
	m := hmac.New(sha256.New, b.key)
	m.Write([]byte(sessionLabel))
	m.Write([]byte(exp))
	return m.Sum(nil)
}

// sessionOK reports whether r carries an unexpired session cookie made with
// this token.
func (b *bearer) sessionOK(r *http.Request) bool {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return false
	}
	e, sig, ok := strings.Cut(c.Value, ".")
	if !ok {
		return false
	}
	exp, err := strconv.ParseInt(e, 10, 64)
	if err != nil || time.Now().Unix() >= exp {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(got, b.mac(e))
}

func (s *Server) mountLogin() {
	s.mux.HandleFunc("GET "+LoginPath, s.handleLoginForm)
	s.mux.HandleFunc("POST "+LoginPath, s.handleLogin)
	s.mux.HandleFunc("POST "+LogoutPath, s.handleLogout)
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Log in · otelbench</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:14px system-ui,sans-serif;margin:0;color:#222}nav{background:#1f2d3d;padding:8px 16px;color:#fff}
main{padding:12px 16px}input{margin-right:6px}.err{color:#b00}</style></head>
<body><nav>otelbench</nav><main><h1>Log in</h1>
{{if .Error}}<p class="err" id="login-error">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}" id="login">
<input type="hidden" name="next" value="{{.Next}}">
<label>Token <input type="password" name="token" id="token" autocomplete="current-password" autofocus required></label>
<button type="submit">Log in</button></form></main></body></html>
`))

type loginView struct{ Action, Next, Error string }

func (s *Server) renderLogin(w http.ResponseWriter, status int, next, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY") // no clickjacking of the form
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, loginView{Action: LoginPath, Next: next, Error: msg})
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	s.renderLogin(w, http.StatusOK, safeNext(r.URL.Query().Get("next")), "")
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "cross-site login refused", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad login form", http.StatusBadRequest)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if !s.auth.tokenOK(r.PostForm.Get("token")) {
		s.stats.rejected(reasonUnauthorized)
		select { // a little friction for guessers, cut short if the client leaves
		case <-time.After(loginFailDelay):
		case <-r.Context().Done():
		}
		s.renderLogin(w, http.StatusUnauthorized, next, "Wrong token.")
		return
	}
	exp := time.Now().Add(DefaultSessionTTL)
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: s.auth.newSession(exp), Path: "/",
		Expires: exp, MaxAge: int(DefaultSessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "cross-site logout refused", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

// sameOrigin refuses a form post another site made the browser send: by
// Sec-Fetch-Site where the browser sets it, else by Origin. A request with
// neither (curl, scripts) is no browser CSRF and passes: it still has to
// know the token.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}

// safeNext keeps a post-login redirect on the dashboard: a local path under
// /ui/, never another host ("//evil", "/\evil").
func safeNext(next string) string {
	if !strings.HasPrefix(next, dashboardPrefix) || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, LoginPath) {
		return dashboardPrefix
	}
	return next
}
