package main

import (
	"strings"
	"testing"
)

func TestCompareFormatPointsToFileFlags(t *testing.T) {
	tests := []struct {
		format string
		want   string
	}{
		{"benchfmt", "use --benchfmt FILE"},
		{"json", "use --json FILE"},
		{"html", "want text or markdown"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			code, out := runCLI(t, "compare", "--format", tt.format, "HEAD~1", "HEAD")
			if code != 2 || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, want 2 with %q\n%s", code, tt.want, out)
			}
		})
	}
}
