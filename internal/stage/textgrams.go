package stage

import (
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// log_text holds, per group of log ids, the distinct trigrams of the group's bodies as tokens
// of FTS5's ascii tokenizer: each trigram (3 characters, case-folded by unicode.ToLower) is one
// token, the hex of its UTF-8 bytes ("k f" is 6b2066). The trigram tokenizer that indexed whole
// bodies before did the same windows once per occurrence, and a group's bodies repeat most of
// theirs; it also indexed the windows across the newlines that joined them. A search asks for
// the same tokens of its term (TextQuery), so it is exactly as selective as before.

// asciiGrams is the number of trigrams of 7-bit ASCII characters, the bitset's size in bits.
const asciiGrams = 1 << 21

// gramSet collects the distinct trigrams of a group's bodies and writes them as a document.
// The zero value is ready to use.
type gramSet struct {
	ascii []uint64            // bitset over the packed ASCII trigrams (r0<<14 | r1<<7 | r2)
	set   []uint32            // the packed trigrams set in ascii, to clear it
	other map[string]struct{} // trigrams with a non-ASCII character
	doc   []byte              // the tokens, space-separated
}

// add adds the trigrams of body.
func (s *gramSet) add(body string) {
	if s.ascii == nil {
		s.ascii = make([]uint64, asciiGrams/64)
	}
	if isASCII(body) {
		s.addASCII(body)
		return
	}
	s.addRunes(body)
}

// isASCII reports whether s is 7-bit ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// addASCII is addRunes for a body of 7-bit ASCII, a byte a character: the window is the
// packed key itself, and a token is the hex of its three bytes. Log bodies are mostly ASCII,
// and this runs on the projector's committing thread.
func (s *gramSet) addASCII(body string) {
	if len(body) < 3 {
		return
	}
	const mask = asciiGrams - 1
	k := uint32(foldASCII(body[0]))<<7 | uint32(foldASCII(body[1]))
	for i := 2; i < len(body); i++ {
		k = (k<<7 | uint32(foldASCII(body[i]))) & mask
		word, bit := &s.ascii[k>>6], uint64(1)<<(k&63)
		if *word&bit != 0 {
			continue
		}
		*word |= bit
		s.set = append(s.set, k)
		if len(s.doc) > 0 {
			s.doc = append(s.doc, ' ')
		}
		const hexDigits = "0123456789abcdef"
		c0, c1, c2 := byte(k>>14), byte(k>>7)&0x7f, byte(k)&0x7f
		s.doc = append(s.doc, hexDigits[c0>>4], hexDigits[c0&15], hexDigits[c1>>4], hexDigits[c1&15],
			hexDigits[c2>>4], hexDigits[c2&15])
	}
}

// foldASCII lower-cases an ASCII letter, as unicode.ToLower does.
func foldASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// addRunes adds the trigrams of body, any UTF-8.
func (s *gramSet) addRunes(body string) {
	var w [3]rune // the window, folded
	n := 0        // characters in w
	for _, r := range body {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		w[0], w[1], w[2] = w[1], w[2], r
		if n++; n < 3 {
			continue
		}
		if w[0]|w[1]|w[2] < utf8.RuneSelf {
			k := uint32(w[0])<<14 | uint32(w[1])<<7 | uint32(w[2])
			if s.ascii[k>>6]&(1<<(k&63)) != 0 {
				continue
			}
			s.ascii[k>>6] |= 1 << (k & 63)
			s.set = append(s.set, k)
			s.doc = appendGram(s.doc, w)
			continue
		}
		key := string(w[:])
		if _, ok := s.other[key]; ok {
			continue
		}
		if s.other == nil {
			s.other = make(map[string]struct{})
		}
		s.other[key] = struct{}{}
		s.doc = appendGram(s.doc, w)
	}
}

// appendGram appends the token of trigram w, preceded by a space unless doc is empty.
func appendGram(doc []byte, w [3]rune) []byte {
	if len(doc) > 0 {
		doc = append(doc, ' ')
	}
	var b [3 * utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], w[0])
	n += utf8.EncodeRune(b[n:], w[1])
	n += utf8.EncodeRune(b[n:], w[2])
	return hex.AppendEncode(doc, b[:n])
}

// reset empties the set for the next group.
func (s *gramSet) reset() {
	for _, k := range s.set {
		s.ascii[k>>6] = 0
	}
	s.set = s.set[:0]
	clear(s.other)
	s.doc = s.doc[:0]
}

// TextQuery returns the FTS5 query on log_text matching every group that holds all trigrams of
// each of runs (case-folded as the index folds them), ANDed; "" when no run has 3 characters.
// Every body holding each run is in a group it matches.
func TextQuery(runs ...string) string {
	seen := map[[3]rune]bool{}
	var parts []string
	for _, run := range runs {
		var w [3]rune
		n := 0
		for _, r := range run {
			w[0], w[1], w[2] = w[1], w[2], unicode.ToLower(r)
			if n++; n < 3 || seen[w] {
				continue
			}
			seen[w] = true
			parts = append(parts, `"`+string(appendGram(nil, w))+`"`)
		}
	}
	return strings.Join(parts, " AND ")
}
