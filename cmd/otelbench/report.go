package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	loadreport "github.com/otelbench/otelbench/internal/report"
)

func newReportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Merge and show saved load reports",
		Long: `report works on the JSON reports of otelbench load (--json FILE).

merge combines the reports of the shards of one load, run at the same time
on several machines, exactly: counts add up and the HDR latency histograms
merge, so the percentiles are those of every request. show prints any saved
report, single or merged, as load prints it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newReportMergeCmd(), newReportShowCmd())
	return cmd
}

func newReportMergeCmd() *cobra.Command {
	var jsonFile string
	var bound time.Duration
	cmd := &cobra.Command{
		Use:   "merge REPORT.json... | -",
		Short: "Merge the reports of the shards of one load exactly",
		Long: `merge sums the counts and merges the latency histograms of the reports of
one load run from several machines, and divides by the common window (from
the earliest start to the latest end). It refuses reports of different
loads (histogram geometry, or any setting but the rate, concurrency, request
budget and seed that sharding splits), the same shard twice, and any merge
that would drop a value. It prints how far apart the shards started, with a
warning past --spread-bound.

"-" reads the reports from stdin, in any stream of logs: every indented
JSON object that --json - writes is a report, and the "[pod/...] " prefix
of kubectl logs --prefix is understood, so the logs of a Kubernetes
Indexed Job whose pods ran load --json - merge as they come.

Exit status: 0 ok, 1 when the reports cannot be merged, 2 on usage errors.`,
		Example: `  otelbench report merge reports/shard-*.json --json merged.json
  kubectl logs --prefix --tail=-1 --max-log-requests=64 -l job-name=otelbench-load | otelbench report merge -`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in []loadreport.Input
			for _, path := range args {
				if path == "-" {
					got, skipped, err := loadreport.ReadStream(cmd.InOrStdin(), "stdin")
					if err != nil {
						return err
					}
					if skipped > 0 {
						cmd.PrintErrf("report merge: skipped %d lines of stdin that are not part of a report\n", skipped)
					}
					in = append(in, got...)
					continue
				}
				r, err := loadreport.ReadFile(path)
				if err != nil {
					return err
				}
				in = append(in, loadreport.Input{Name: path, Report: r})
			}
			if len(in) == 0 {
				return fmt.Errorf("report merge: no reports in the input")
			}
			merged, err := loadreport.Merge(in)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonFile == "-" {
				for _, w := range loadreport.StartSpread(merged, bound).Warnings() {
					cmd.PrintErrf("warning: %s\n", w)
				}
				return merged.WriteJSON(out)
			}
			if err := loadreport.WriteText(out, merged, bound); err != nil {
				return err
			}
			if jsonFile == "" {
				return nil
			}
			return writeJSONFile(jsonFile, merged)
		},
	}
	cmd.Flags().StringVar(&jsonFile, "json", "", "also write the merged JSON report to `FILE` (- for stdout, replacing the table)")
	cmd.Flags().DurationVar(&bound, "spread-bound", loadreport.DefaultSpreadBound, "warn when the shards' first sends are further apart than this")
	return cmd
}

func newReportShowCmd() *cobra.Command {
	var bound time.Duration
	cmd := &cobra.Command{
		Use:     "show REPORT.json",
		Short:   "Print a saved load report, single or merged, as a table",
		Example: `  otelbench report show merged.json`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := loadreport.ReadFile(args[0])
			if err != nil {
				return err
			}
			return loadreport.WriteText(cmd.OutOrStdout(), r, bound)
		},
	}
	cmd.Flags().DurationVar(&bound, "spread-bound", loadreport.DefaultSpreadBound, "warn when the shards' first sends are further apart than this")
	return cmd
}
