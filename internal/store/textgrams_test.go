package store

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTextQueryWithinBody: for random bodies (ASCII of both cases, whitespace, non-ASCII
// letters that fold) and random substrings of them, every token a search asks for
// (TextQuery) is in the body's document (gramSet), and each of the document's tokens appears
// once.
func TestTextQueryWithinBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []rune("aAbBzZ09 \t\n-\"ÜüÇçİıß日本")
	var s gramSet
	for range 2000 {
		body := make([]rune, rng.IntN(40))
		for i := range body {
			body[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s.reset()
		s.add(string(body))
		doc := map[string]int{}
		for _, tok := range strings.Fields(string(s.doc)) {
			doc[tok]++
			if doc[tok] > 1 {
				t.Fatalf("body %q: token %s twice in %q", string(body), tok, s.doc)
			}
		}
		if len(body) < 3 {
			if len(s.doc) != 0 {
				t.Fatalf("body %q of %d characters has tokens %q", string(body), len(body), s.doc)
			}
			continue
		}
		i := rng.IntN(len(body) - 2)
		j := i + 3 + rng.IntN(len(body)-i-2)
		sub := string(body[i:j])
		for _, part := range strings.Split(TextQuery(sub), " AND ") {
			if doc[strings.Trim(part, `"`)] != 1 {
				t.Fatalf("body %q, term %q: %s is not in the document %q", string(body), sub, part, s.doc)
			}
		}
	}
	if q := TextQuery("ab"); q != "" {
		t.Errorf(`TextQuery("ab") = %q, want ""`, q)
	}
	if q := TextQuery("K F"); q != `"6b2066"` {
		t.Errorf(`TextQuery("K F") = %q, want "6b2066" (the hex of "k f")`, q)
	}
}
