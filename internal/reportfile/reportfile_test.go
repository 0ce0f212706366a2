package reportfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type doc struct {
	Schema string `json:"schema"`
	N      int    `json:"n"`
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, doc{Schema: "v2", N: 7}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"schema\": \"v2\",\n  \"n\": 7\n}\n"; buf.String() != want {
		t.Errorf("written: got %q, want %q", buf.String(), want)
	}
	var got doc
	if err := Read(&buf, &got, func() string { return got.Schema }, "v2", "v1"); err != nil {
		t.Fatal(err)
	}
	if got != (doc{Schema: "v2", N: 7}) {
		t.Errorf("read: got %+v, want schema v2, n 7", got)
	}
}

func TestReadRefuses(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"other schema", `{"schema":"v3"}`, `read report: schema "v3", want "v2" or "v1"`},
		{"no schema", `{"n":1}`, `read report: schema "", want "v2" or "v1"`},
		{"not JSON", `n=1`, `read report: invalid character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := Read(strings.NewReader(tt.in), &d, func() string { return d.Schema }, "v2", "v1")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want an error starting %q", err, tt.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	err := Write(failWriter{}, doc{})
	if err == nil || err.Error() != "write report: disk full" {
		t.Errorf("got %v, want write report: disk full", err)
	}
}
