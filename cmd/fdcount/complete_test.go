package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestMethodCompletion asks cobra's __complete command, as the shell
// completion scripts do, for the values of --method.
func TestMethodCompletion(t *testing.T) {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"__complete", "--method", ""})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	got := strings.Join(lines[:len(lines)-1], ",")
	if want := "auto,stat,readdir,bpf"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
