// Package shellwords splits a command line into words the way a POSIX shell
// does for quoting, without any expansion, and quotes words back for sh -c.
//
// compare takes whole command lines in single flags (--load, --serve,
// --build); splitting them here, rather than handing them to a shell, keeps
// the process we measure the process we started.
package shellwords

import (
	"errors"
	"strings"
)

// Errors returned by Split.
var (
	// ErrUnterminatedQuote means a ' or " was opened and never closed.
	ErrUnterminatedQuote = errors.New("unterminated quote")
	// ErrTrailingBackslash means the line ends in an unescaped backslash.
	ErrTrailingBackslash = errors.New("trailing backslash")
)

// Split splits line into words following POSIX shell quoting: whitespace
// separates words; '...' is literal; inside "..." a backslash escapes only
// $ ` " \ and newline; outside quotes a backslash escapes any character and a
// backslash-newline disappears. Nothing is expanded ($VAR, globs, ~ stay as
// written). An empty quoted string is an empty word.
func Split(line string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(line) {
				return nil, ErrTrailingBackslash
			}
			i++
			if line[i] != '\n' {
				cur.WriteByte(line[i])
				inWord = true
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, ErrUnterminatedQuote
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j, err := doubleQuoted(line, i+1, &cur)
			if err != nil {
				return nil, err
			}
			i = j
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// doubleQuoted copies the body of a "..." string starting at line[i] into
// cur and returns the index of the closing quote.
func doubleQuoted(line string, i int, cur *strings.Builder) (int, error) {
	for ; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			return i, nil
		case '\\':
			if i+1 >= len(line) {
				return 0, ErrUnterminatedQuote
			}
			switch n := line[i+1]; n {
			case '$', '`', '"', '\\':
				cur.WriteByte(n)
				i++
			case '\n':
				i++
			default:
				cur.WriteByte(c)
			}
		default:
			cur.WriteByte(c)
		}
	}
	return 0, ErrUnterminatedQuote
}

// Quote returns s quoted so that a POSIX shell (and Split) reads it back as
// exactly one word equal to s.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, needsQuote) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

func needsQuote(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./=:,+@%", r)
}
