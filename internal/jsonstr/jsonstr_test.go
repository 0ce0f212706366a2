package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"tab\t\"q\" \\", `"tab\t\"q\" \\"`},
		{"\b\f\n\r\x01\x1f", `"\b\f\n\r\u0001\u001f"`},
		{"<a href=x&y>", `"\u003ca href=x\u0026y\u003e"`},
		{"é \u2028\u2029", "\"é \\u2028\\u2029\""},
		{"bad \xff utf8", `"bad \ufffd utf8"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := string(Append([]byte("x"), tt.in)); got != "x"+tt.want {
				t.Errorf("Append(%q) = %s, want x%s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzAppend: Append writes what json.Marshal writes for any string, given as a string or
// as bytes.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a\"b", "<>&", "\u2028\u2029", "\xff\xfe", "\xe2\x80", "\x00\x7f", "é€😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
		if got := Append(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Errorf("Append([]byte %q) = %s, want %s", s, got, want)
		}
	})
}
