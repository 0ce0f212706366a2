package ingestsrv

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/otelbench/otelbench/internal/otlpcodec"
)

// bearer checks "Authorization: Bearer <token>" in constant time: both sides
// are hashed first, so neither the content nor the length of the token
// leaks through timing.
type bearer struct {
	sum [sha256.Size]byte
}

func newBearer(token string) *bearer { return &bearer{sum: sha256.Sum256([]byte(token))} }

func (b *bearer) allowed(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(h[len(prefix):])))
	return subtle.ConstantTimeCompare(got[:], b.sum[:]) == 1
}

// requireAuth wraps h with the bearer check (a no-op without a token). OTLP
// routes answer 401 with a google.rpc.Status in the request's encoding, the
// others in plain text.
func (s *Server) requireAuth(h http.Handler, otlp bool) http.Handler {
	if s.auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth.allowed(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="otelbench"`)
		if otlp {
			enc, _ := otlpcodec.ParseContentType(r.Header.Get("Content-Type"))
			s.reject(w, enc, http.StatusUnauthorized, reasonUnauthorized, otlpcodec.CodeUnauthenticated, "missing or wrong bearer token")
			return
		}
		s.stats.rejected(reasonUnauthorized)
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
	})
}
