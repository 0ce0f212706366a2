package main

import "github.com/spf13/cobra"

// subcommands lists every otelbench subcommand; each lives in its own file.
func subcommands() []*cobra.Command {
	return []*cobra.Command{
		newServeCmd(),
		newLoadCmd(),
		newBenchCmd(),
		newProfileCmd(),
		newCompareCmd(),
		newVersionCmd(),
		newPipelineCmd(),
		newReportCmd(),
	}
}
