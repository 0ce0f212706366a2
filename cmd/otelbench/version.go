package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go toolchain of this binary",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "otelbench %s\n", buildVersion())
			fmt.Fprintf(out, "go        %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			info, ok := debug.ReadBuildInfo()
			if !ok {
				return nil
			}
			fmt.Fprintf(out, "module    %s\n", info.Main.Path)
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					fmt.Fprintf(out, "revision  %s\n", s.Value)
				case "vcs.time":
					fmt.Fprintf(out, "committed %s\n", s.Value)
				case "vcs.modified":
					fmt.Fprintf(out, "modified  %s\n", s.Value)
				}
			}
			return nil
		},
	}
}
