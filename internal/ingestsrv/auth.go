package ingestsrv

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/otelbench/otelbench/internal/otlpcodec"
)

// bearer checks "Authorization: Bearer <token>" in constant time: both sides
// are hashed first, so neither the content nor the length of the token
// leaks through timing. It also issues and checks the dashboard's session
// cookie (auth_session.go).
type bearer struct {
	sum [sha256.Size]byte
	key []byte // HMAC key of session cookies: the token itself
}

func newBearer(token string) *bearer {
	return &bearer{sum: sha256.Sum256([]byte(token)), key: []byte(token)}
}

// tokenOK reports whether tok is the token, in constant time.
func (b *bearer) tokenOK(tok string) bool {
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], b.sum[:]) == 1
}

func (b *bearer) allowed(r *http.Request) bool {
	return b.headerOK(r.Header.Get("Authorization"))
}

// headerOK reports whether h, an Authorization header (or gRPC
// authorization metadata), is "Bearer <token>".
func (b *bearer) headerOK(h string) bool {
	const prefix = "bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return b.tokenOK(strings.TrimSpace(h[len(prefix):]))
}

// authMode says what a route accepts besides the bearer header and how it
// refuses.
type authMode int

const (
	authBearer  authMode = iota // bearer only, 401 JSON (/metrics, pprof)
	authOTLP                    // bearer only, 401 google.rpc.Status (ingest)
	authBrowser                 // bearer or session cookie; navigations to the dashboard go to the login page
)

// requireAuth wraps h with the token check (a no-op without a token). OTLP
// routes answer 401 with a google.rpc.Status in the request's encoding, the
// others {"error":...} like the query API. Browser routes also take the
// session cookie, and send a browser navigating to the dashboard to the
// login page instead of a bare 401.
func (s *Server) requireAuth(h http.Handler, mode authMode) http.Handler {
	if s.auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth.allowed(r) || (mode == authBrowser && s.auth.sessionOK(r)) {
			h.ServeHTTP(w, r)
			return
		}
		if mode == authBrowser && isDashboardNavigation(r) {
			http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="otelbench"`)
		if mode == authOTLP {
			enc, _ := otlpcodec.ParseContentType(r.Header.Get("Content-Type"))
			s.reject(w, enc, http.StatusUnauthorized, reasonUnauthorized, otlpcodec.CodeUnauthenticated, "missing or wrong bearer token")
			return
		}
		s.stats.rejected(reasonUnauthorized)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"missing or wrong bearer token or session"}` + "\n"))
	})
}

// isDashboardNavigation reports whether r is a browser loading a dashboard
// page (not a script, an API client or an EventSource).
func isDashboardNavigation(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if p := r.URL.Path; p != "/" && !strings.HasPrefix(p, dashboardPrefix) {
		return false
	}
	if m := r.Header.Get("Sec-Fetch-Mode"); m != "" {
		return m == "navigate"
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
