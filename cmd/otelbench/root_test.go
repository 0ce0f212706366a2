package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestRootExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"help", nil, 0, "Usage:"},
		{"version", []string{"--version"}, 0, "otelbench version"},
		{"unknown flag", []string{"--nope"}, 2, ""},
		{"unknown command", []string{"bogus"}, 2, `unknown command "bogus"`},
		{"typo suggests serve", []string{"serv"}, 2, "did you mean serve?"},
		{"typo suggests compare", []string{"compar"}, 2, "did you mean compare?"},
		{"version command", []string{"version"}, 0, "go        go1."},
		{"completion", []string{"completion", "bash"}, 0, "bash completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRun(t, tt.args, tt.want, tt.out)
		})
	}
}

// TestFlagCompletion asks cobra's hidden __complete command, as the shell
// scripts of `otelbench completion` do, for the values of enum flags.
func TestFlagCompletion(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"serve", "--sync", ""}, []string{"full", "normal", "off"}},
		{[]string{"bench", "--sync", ""}, []string{"full", "normal", "off"}},
		{[]string{"load", "--encoding", ""}, []string{"proto", "json"}},
		{[]string{"load", "--protocol", ""}, []string{"http/protobuf", "http/json", "grpc"}},
		{[]string{"bench", "--protocol", ""}, []string{"http/protobuf", "http/json", "grpc"}},
		{[]string{"load", "--compression", ""}, []string{"none", "gzip", "zstd"}},
		{[]string{"bench", "--compression", ""}, []string{"none", "gzip", "zstd"}},
		{[]string{"profile", "--sort", ""}, []string{"time", "count", "errors", "avg"}},
		{[]string{"compare", "--format", ""}, []string{"text", "markdown"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[:2], " "), func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(io.Discard)
			root.SetArgs(append([]string{"__complete"}, tt.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			got := lines[:len(lines)-1] // the last line is the directive
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
