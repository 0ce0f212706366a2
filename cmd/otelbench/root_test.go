package main

import (
	"bytes"
	"context"
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
		{"unknown command", []string{"bogus"}, 2, ""},
		{"completion", []string{"completion", "bash"}, 0, "bash completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(tt.args)
			err := root.ExecuteContext(context.Background())
			if got := report(err); got != tt.want {
				t.Errorf("exit code = %d (err %v), want %d", got, err, tt.want)
			}
			if !strings.Contains(out.String(), tt.out) {
				t.Errorf("output %q does not contain %q", out.String(), tt.out)
			}
		})
	}
}
