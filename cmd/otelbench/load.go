package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLoadCmd is a placeholder until its issue lands; it fails loudly.
func newLoadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "load",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("load: not built yet")
		},
	}
}
