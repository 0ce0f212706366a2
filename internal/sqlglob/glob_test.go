package sqlglob

import (
	"database/sql"
	"strings"
	"testing"
	"unicode/utf8"

	_ "modernc.org/sqlite"
)

func openMemDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

var globSeeds = []struct{ pattern, s string }{
	{"*", ""},
	{"a*c", "abbbc"},
	{"a?c", "abc"},
	{"a?c", "ac"},
	{"[abc]x", "bx"},
	{"[^abc]x", "bx"},
	{"[a-c]*", "cat"},
	{"[]]", "]"},
	{"[^]]", "]"},
	{"[]-a]", "-"},
	{"[a-]", "-"},
	{"[", "["},
	{"*[", "x["},
	{"x[a", "xa"},
	{"*error*", "an ERROR here"},
	{"*error*", "an error here"},
	{"*[0-9][0-9]*", "code 42"},
	{"?*?", "é"},
	{"é*", "éa"},
	{"[é-ü]", "ö"},
	{"**a**", "xax"},
	{"*?", ""},
	{"a-[c-a]", "a-b"},
	{"[a-c-e]", "d"},
	{"[a-c-e]", "-"},
}

func TestGlobMatchesSQLite(t *testing.T) {
	db := openMemDB(t)
	for _, tc := range globSeeds {
		t.Run(tc.pattern+"|"+tc.s, func(t *testing.T) {
			var want bool
			if err := db.QueryRow(`SELECT ? GLOB ?`, tc.s, tc.pattern).Scan(&want); err != nil {
				t.Fatalf("sqlite: %v", err)
			}
			g := Compile(tc.pattern)
			if got := g.Match(tc.s); got != want {
				t.Errorf("%q GLOB %q: got %v, want %v (SQLite)", tc.s, tc.pattern, got, want)
			}
		})
	}
}

// FuzzGlobMatchesSQLite differentially tests the Go GLOB against SQLite.
func FuzzGlobMatchesSQLite(f *testing.F) {
	for _, tc := range globSeeds {
		f.Add(tc.pattern, tc.s)
	}
	db := openMemDB(f)
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) ||
			strings.ContainsRune(pattern, 0) || strings.ContainsRune(s, 0) ||
			len(pattern) > 64 || len(s) > 256 || strings.Count(pattern, "*") > 4 { // SQLite backtracks exponentially in stars
			t.Skip()
		}
		var want bool
		if err := db.QueryRow(`SELECT ? GLOB ?`, s, pattern).Scan(&want); err != nil {
			t.Fatalf("sqlite: %v", err)
		}
		g := Compile(pattern)
		if got := g.Match(s); got != want {
			t.Errorf("%q GLOB %q: got %v, want %v (SQLite)", s, pattern, got, want)
		}
	})
}
