package main

import (
	"github.com/spf13/cobra"

	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
	prof "github.com/otelbench/otelbench/internal/profile"
	"github.com/otelbench/otelbench/internal/store"
)

// enumValues lists the values of every flag that takes one of a fixed set,
// for shell completion. A command whose flag of the same name means
// something else registers its own completion, which wins.
var enumValues = map[string][]string{
	"sync":        {string(store.SyncFull), string(store.SyncNormal), string(store.SyncOff)},
	"encoding":    {string(otlpgen.EncodingProto), string(otlpgen.EncodingJSON)},
	"protocol":    {string(loadgen.ProtocolHTTPProtobuf), string(loadgen.ProtocolHTTPJSON), string(loadgen.ProtocolGRPC)},
	"compression": {string(otlpgen.CompressionNone), string(otlpgen.CompressionGzip), string(otlpgen.CompressionZstd)},
	"times":       {string(loadgen.TimesLive), string(loadgen.TimesReplay)},
	"sort":        {string(prof.SortTime), string(prof.SortCount), string(prof.SortErrors), string(prof.SortAvg)},
	"attach":      {string(prof.AttachTPBTF), string(prof.AttachRawTP)},
	"format":      {"text", "markdown"},
}

// registerCompletions walks cmd and its subcommands and completes every
// flag named in enumValues that has no completion of its own.
func registerCompletions(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		registerCompletions(c)
	}
	for name, values := range enumValues {
		if cmd.LocalFlags().Lookup(name) == nil {
			continue
		}
		if _, ok := cmd.GetFlagCompletionFunc(name); ok {
			continue
		}
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}
