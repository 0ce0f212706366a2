package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/otelbench/otelbench/internal/exitcode"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// it comes from the module build info.
var version = ""

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "otelbench",
		Short: "Profile and benchmark telemetry pipelines",
		Long: `otelbench serves a durable OTLP/HTTP ingest target, loads it with honest
latency accounting, compares two versions of it under identical load, and
profiles the syscalls and CPU hot spots of any process with eBPF.`,
		Version:           buildVersion(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		Args:              unknownCommand,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
		// "otelbench serv" suggests serve; "otelbench lod" suggests load.
		SuggestionsMinimumDistance: 2,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return exitcode.UsageError(err)
	})
	root.AddCommand(subcommands()...)
	registerCompletions(root)
	return root
}

// unknownCommand refuses positional arguments to the root: they are
// misspelt subcommands, and the error suggests the closest ones.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return exitcode.Usagef("%s", msg)
}

// usageArgs marks errors of a positional-argument validator as usage errors
// (exit 2) rather than failures.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return exitcode.UsageError(err)
		}
		return nil
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "-dirty"
		}
	}
	return v
}
