package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/otelbench/otelbench/internal/sqlglob"
)

// Matcher returns a predicate equal to the SQL the /logs endpoint runs for
// f (the time range excluded: a tail has no end). q folds case as the
// log_text index does (unicode.ToLower per character, stage.TextQuery);
// glob is SQLite GLOB; service matches as serviceNames resolves it; attr.*
// and resource.* as attrPred does.
func (f LogFilter) Matcher() func(*Log) bool {
	q := strings.ToLower(f.Q)
	var g *sqlglob.Pattern
	if f.Glob != "" {
		p := sqlglob.Compile(f.Glob)
		g = &p
	}
	traceHex := ""
	if f.TraceID != nil {
		traceHex = fmt.Sprintf("%x", f.TraceID)
	}
	return func(l *Log) bool {
		switch {
		case f.Service != "" && !serviceMatches(l.Service, f.Service),
			f.SeverityMin > 0 && l.SeverityNumber < f.SeverityMin,
			traceHex != "" && l.TraceID != traceHex,
			q != "" && !strings.Contains(strings.ToLower(l.Body), q),
			g != nil && !g.Match(l.Body):
			return false
		}
		for _, a := range f.Attrs {
			m := l.Attributes
			if a.Resource {
				m = l.Resource
			}
			if !attrMatches(m, a) {
				return false
			}
		}
		return true
	}
}

// serviceMatches reports whether a stored service name is the one a filter
// names: equal bytes, or, for a name that is not valid UTF-8, equal to the
// form /services lists it in.
func serviceMatches(stored, want string) bool {
	return stored == want || !utf8.ValidString(stored) && displayName(stored) == want
}

// displayName is the form of a stored name that the JSON answers carry:
// each byte that is not valid UTF-8 becomes U+FFFD, as encoding/json writes
// it (strings.ToValidUTF8 would fold a run of them into one).
func displayName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// attrMatches reports whether the JSON attribute map m has f.Key equal to
// f.Value: a string by its value, anything else by its JSON text.
func attrMatches(m json.RawMessage, f AttrFilter) bool {
	if len(m) < 2 {
		return false
	}
	var attrs map[string]json.RawMessage
	if json.Unmarshal(m, &attrs) != nil {
		return false
	}
	v, ok := attrs[f.Key]
	if !ok {
		return false
	}
	if len(v) > 0 && v[0] == '"' {
		var s string
		return json.Unmarshal(v, &s) == nil && s == f.Value
	}
	return bytes.Equal(v, []byte(f.Value))
}
