package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newCompareCmd is a placeholder until its issue lands; it fails loudly.
func newCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("compare: not built yet")
		},
	}
}
