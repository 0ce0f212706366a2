package shellwords

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
		err  error
	}{
		{"empty", "", nil, nil},
		{"blanks", " \t\n ", nil, nil},
		{"plain", "--mix logs=1,traces=1 --records 10", []string{"--mix", "logs=1,traces=1", "--records", "10"}, nil},
		{"single quotes", `--header 'X-A: b c'`, []string{"--header", "X-A: b c"}, nil},
		{"double quotes", `"a \"b\" \$c \\ \x"`, []string{`a "b" $c \ \x`}, nil},
		{"backslash space", `a\ b c`, []string{"a b", "c"}, nil},
		{"backslash newline", "a\\\nb", []string{"ab"}, nil},
		{"adjacent", `a'b'"c"d`, []string{"abcd"}, nil},
		{"empty word", `'' ""`, []string{"", ""}, nil},
		{"no expansion", `$HOME ~ *`, []string{"$HOME", "~", "*"}, nil},
		{"unterminated single", `'abc`, nil, ErrUnterminatedQuote},
		{"unterminated double", `"abc`, nil, ErrUnterminatedQuote},
		{"unterminated double escape", `"abc\`, nil, ErrUnterminatedQuote},
		{"trailing backslash", `abc\`, nil, ErrTrailingBackslash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.line)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Split(%q) error = %v, want %v", tt.line, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Split(%q) mismatch (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// TestSplitMatchesShell checks Split against a real POSIX shell for lines
// that need no expansion.
func TestSplitMatchesShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh in PATH")
	}
	lines := []string{
		`a b  c`, `'x y' "z \" w" v\ u`, `"a\b" 'c\d' e\\f`, `a'b'"c"`, "\"\\$x \\`y\\`\"",
	}
	for _, line := range lines {
		out, err := exec.Command(sh, "-c", `for a in `+line+`; do printf '%s\0' "$a"; done`).Output()
		if err != nil {
			t.Fatalf("sh %q: %v", line, err)
		}
		var want []string
		start := 0
		for i, b := range out {
			if b == 0 {
				want = append(want, string(out[start:i]))
				start = i + 1
			}
		}
		got, err := Split(line)
		if err != nil {
			t.Fatalf("Split(%q): %v", line, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Split(%q) differs from sh (-sh +Split):\n%s", line, diff)
		}
	}
}

func FuzzQuoteSplit(f *testing.F) {
	for _, s := range []string{"", "a", "a b", "it's", `"\$`, "x\ny", "{out}"} {
		f.Add(s, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		words := []string{a, b}
		got, err := Split(Join(words))
		if err != nil {
			t.Fatalf("Split(Join(%q)): %v", words, err)
		}
		if diff := cmp.Diff(words, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	})
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`a 'b' "c\"d" e\ f`, `'`, `"\`, "\\\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			return
		}
		again, err := Split(Join(words))
		if err != nil {
			t.Fatalf("Split(Join(%q)): %v", words, err)
		}
		if len(again) != len(words) {
			t.Fatalf("round trip of %q: got %q", words, again)
		}
	})
}
