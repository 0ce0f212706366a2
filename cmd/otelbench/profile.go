package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newProfileCmd is a placeholder until its issue lands; it fails loudly.
func newProfileCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profile",
		Short: "(not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("profile: not built yet")
		},
	}
}
