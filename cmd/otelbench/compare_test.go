package main

import (
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
			wantRun(t, []string{"compare", "--format", tt.format, "HEAD~1", "HEAD"}, 2, tt.want)
		})
	}
}
