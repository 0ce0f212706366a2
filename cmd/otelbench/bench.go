package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/otelbench/otelbench/internal/bench"
	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/store"
)

func newBenchCmd() *cobra.Command {
	var (
		f       loadFlags
		cfg     bench.Config // the store's part: Dir, Sync, TracesFile
		sync    string
		catchUp time.Duration
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Serve in-process, load it, and check that nothing acknowledged was lost",
		Long: `bench starts the embedded OTLP server in this process on a temporary data
directory and a free loopback port, runs a mixed load against it (10 s by
default; every load flag applies), then checks through GET /api/v1/stats that
the records stored equal the records acknowledged: it prints "nothing lost" or
the exact difference per signal, with the load report and the process's peak
RSS and CPU time (server and generator share the process). It then waits (up to
--catch-up) for projection into the relational tables to catch up and reports
the lag the load left, the catch-up rate, and the pages the projector wrote and
read per 1,000 records.

Exit status: 0 nothing lost, 1 records lost or --max-error-rate exceeded,
2 on usage errors.`,
		Example: `  otelbench bench
  otelbench bench --duration 30s --rate 500 --records 200 --json bench.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			lc, err := f.config(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			switch {
			case catchUp < 0:
				return exitcode.Usagef("--catch-up %v is negative (0: don't wait)", catchUp)
			case catchUp == 0:
				catchUp = -1 // the flag's 0 is "don't wait", the Config's is "default"
			}
			cfg.Load, cfg.CatchUp, cfg.Store.Sync = lc, catchUp, store.SyncMode(sync)
			if err := cfg.Validate(); err != nil {
				return exitcode.UsageError(err)
			}
			// The server's default soft memory limit, as serve sets it (the generator shares it).
			if limit, err := ingestsrv.MemoryLimit("", os.Getenv("GOMEMLIMIT")); err == nil && limit >= 0 {
				debug.SetMemoryLimit(limit)
			}
			res, err := bench.Run(cmd.Context(), cfg)
			if errors.Is(err, loadgen.ErrInvalidConfig) || errors.Is(err, otlpgen.ErrInvalidConfig) {
				return exitcode.UsageError(err)
			}
			if err != nil {
				return err
			}
			if err := res.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if f.jsonFile != "" && f.jsonFile != "-" {
				if err := writeJSONFile(f.jsonFile, res.Load); err != nil {
					return err
				}
			}
			if err := res.Err(); err != nil {
				return exitcode.New(exitcode.Failure, err)
			}
			if err := res.Load.CheckErrorRate(f.maxErrorRate); err != nil {
				return exitcode.New(exitcode.Failure, err)
			}
			return nil
		},
	}
	f.bind(cmd.Flags(), false)
	cmd.Flags().StringVar(&cfg.Store.Dir, "data-dir", "", "server data directory, kept after the run (default: a temporary directory, removed)")
	cmd.Flags().StringVar(&sync, "sync", "", "store durability: full (default), normal or off")
	cmd.Flags().BoolVar(&cfg.Store.TracesFile, "traces-file", ingestsrv.DefaultTracesFile, "as serve --traces-file: spans in traces.db, projected by a second projector (false: one file)")
	cmd.Flags().DurationVar(&catchUp, "catch-up", bench.DefaultCatchUp, "after the load, wait this long at most for projection to catch up and report its rate and pages (0: don't wait)")
	return cmd
}

// writeJSONFile writes a report (load, pipeline) as JSON to path.
func writeJSONFile(path string, rep interface{ WriteJSON(io.Writer) error }) error {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	if err := rep.WriteJSON(file); err != nil {
		_ = file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}
