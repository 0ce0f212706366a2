// Package jsonstr writes JSON string literals exactly as encoding/json writes a Go string
// (HTML escaping on), without its reflection and allocations. The stager writes the stored
// attribute and body JSON with it, and queries write the strings of their answers: one rule,
// which FuzzAppend holds to json.Marshal, so the stored text and the API's are the bytes the
// standard library would produce.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// safe marks the ASCII bytes a JSON string carries as they are under encoding/json's
// HTML-safe escaping: everything printable but `"`, `\`, `<`, `>` and `&`.
var safe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// Append appends s as a JSON string: short escapes for \ " \b \f \n \r \t, \u00XX for other
// control bytes and for <, > and &, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
func Append[S ~[]byte | ~string](buf []byte, s S) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '\\', '"':
				buf = append(buf, '\\', c)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
