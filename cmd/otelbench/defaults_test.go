package main

import (
	"strconv"
	"testing"

	"github.com/otelbench/otelbench/internal/bench"
	"github.com/otelbench/otelbench/internal/compare"
	"github.com/otelbench/otelbench/internal/ingestsrv"
)

// TestFlagDefaultsAreTheLibraryDefaults: a flag's default is the Default*
// constant the library falls back to, so the CLI and an embedder of the
// package get the same behaviour from one definition.
func TestFlagDefaultsAreTheLibraryDefaults(t *testing.T) {
	tests := []struct {
		cmd, flag, want string
	}{
		{"serve", "traces-file", strconv.FormatBool(ingestsrv.DefaultTracesFile)},
		{"bench", "traces-file", strconv.FormatBool(ingestsrv.DefaultTracesFile)},
		{"bench", "catch-up", bench.DefaultCatchUp.String()},
		{"compare", "warmup", strconv.Itoa(compare.DefaultWarmup)},
	}
	root := newRootCmd()
	for _, tt := range tests {
		t.Run(tt.cmd+" --"+tt.flag, func(t *testing.T) {
			c, _, err := root.Find([]string{tt.cmd})
			if err != nil {
				t.Fatal(err)
			}
			f := c.Flags().Lookup(tt.flag)
			if f == nil {
				t.Fatalf("%s has no --%s", tt.cmd, tt.flag)
			}
			if f.DefValue != tt.want {
				t.Errorf("got default %q, want %q", f.DefValue, tt.want)
			}
		})
	}
}
