package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestByteSizeFlagsTakeUnits: every byte-size flag of every command is a
// "size" value that takes units (--body-bytes 4KiB), so no command is left
// parsing bare integers.
func TestByteSizeFlagsTakeUnits(t *testing.T) {
	isByteSize := func(name string) bool {
		return strings.HasSuffix(name, "-bytes") || slices.Contains([]string{"max-body", "grpc-max-recv"}, name)
	}
	var found []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !isByteSize(f.Name) {
				return
			}
			name := c.CommandPath() + " --" + f.Name
			found = append(found, name)
			if got := f.Value.Type(); got != "size" {
				t.Errorf("%s: got flag type %q, want size", name, got)
			}
			if err := f.Value.Set("4KiB"); err != nil {
				t.Errorf("%s 4KiB: got %v, want accepted", name, err)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for _, want := range []string{"otelbench load --body-bytes", "otelbench pipeline --line-bytes", "otelbench serve --queue-bytes", "otelbench serve --max-body"} {
		if !slices.Contains(found, want) {
			t.Errorf("byte-size flags found %v, want %s among them", found, want)
		}
	}
}
