package stage

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

// TestGramsASCIIFastPath: for ASCII bodies (every byte value below 0x80, both cases), the byte
// path makes exactly the document, in the same order, that the rune path makes, also across
// several bodies of one group.
func TestGramsASCIIFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	var fast, slow gramSet
	fast.add("")
	slow.add("")
	for group := range 300 {
		fast.reset()
		slow.reset()
		for range 1 + rng.IntN(16) {
			body := make([]byte, rng.IntN(60))
			for i := range body {
				if rng.IntN(4) == 0 {
					body[i] = byte(rng.IntN(0x80)) // any ASCII, control characters too
				} else {
					body[i] = "aAbBzZ09 -_/:"[rng.IntN(13)]
				}
			}
			if !isASCII(string(body)) {
				t.Fatalf("test body %q is not ASCII", body)
			}
			fast.addASCII(string(body))
			slow.addRunes(string(body))
		}
		if string(fast.doc) != string(slow.doc) {
			t.Fatalf("group %d: byte path %q, rune path %q", group, fast.doc, slow.doc)
		}
	}
	if isASCII("é") || !isASCII("plain") {
		t.Error("isASCII is wrong")
	}
}

// BenchmarkGramSet: the documents of groups of 16 bodies like the load's (128 bytes of words).
func BenchmarkGramSet(b *testing.B) {
	words := strings.Fields("request completed user session cache miss hit db query timeout retry upstream payload accepted queued flushed order payment checkout inventory shard replica lag ms ok error")
	rng := rand.New(rand.NewPCG(1, 2))
	bodies := make([]string, 1024)
	for i := range bodies {
		var sb strings.Builder
		for sb.Len() < 128 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		bodies[i] = sb.String()[:128]
	}
	var s gramSet
	b.ResetTimer()
	for i := range b.N {
		if i%16 == 0 {
			s.reset()
		}
		s.add(bodies[i%len(bodies)])
	}
}
