package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/logline"
	"github.com/otelbench/otelbench/internal/logwriter"
	"github.com/otelbench/otelbench/internal/pipeline"
)

type pipelineFlags struct {
	cfg        pipeline.Config
	format     string
	rotateMode string
	layout     string
	fsync      string
	sink       string
	slo        string
	jsonFile   string
	agentLog   string
	noProgress bool
	verbose    bool
}

func newPipelineCmd() *cobra.Command {
	var f pipelineFlags
	cmd := &cobra.Command{
		Use:   "pipeline [flags] (-- AGENT-COMMAND... | --agent-pid PID)",
		Short: "Benchmark a log agent end to end: files in, OTLP out, every line accounted for",
		Long: `pipeline writes log files at a paced rate, runs the agent under test (the
command after --, with {dir}, {endpoint}, {grpc_endpoint}, {host}, {port},
{files}, {config} and {work} replaced), receives what it ships over OTLP/HTTP
({endpoint}) or OTLP/gRPC ({grpc_endpoint}) and accounts for every line:
end-to-end latency per stream, missing lines after --drain, duplicates, lines
out of order and unparseable records. It reads the agent's CPU per 1,000
lines, peak RSS and open descriptors from /proc, and with --syscalls its
syscalls per line through eBPF (needs root).

Exit status 1 when more than --max-loss lines are missing or the --slo is
missed. docs/pipeline.md has agent configurations and the report fields.`,
		Example: `  otelbench pipeline --files 4 --rate 10000 --duration 30s --agent-config filelog.yaml -- otelcol --config {config}
  otelbench pipeline --rotate-every 5s --rotate-mode copytruncate -- tailer -mode fixed -dir {dir} -files {files} -endpoint {endpoint} -duration 1h
  otelbench pipeline compare --base 'inotify-*.json' --head 'fixed-*.json'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && f.cfg.AgentPID != 0 {
				return exitcode.Usagef("give an agent command or --agent-pid, not both")
			}
			if len(args) == 0 && f.cfg.AgentPID == 0 {
				return exitcode.Usagef("give the agent command after -- (or --agent-pid PID)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.cfg.Agent = args
			return runPipeline(cmd.Context(), cmd, &f)
		},
	}
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	w := &f.cfg.Writer
	fl.StringVar(&w.Dir, "dir", "", "directory to write the log files in (default: a temporary one, removed afterwards)")
	fl.IntVar(&w.Files, "files", logwriter.DefaultFiles, "number of files (streams)")
	fl.Float64Var(&w.Rate, "rate", logwriter.DefaultRate, "lines per second over all files (open model)")
	fl.DurationVar(&w.Duration, "duration", logwriter.DefaultDuration, "how long to write")
	w.LineBytes = logwriter.Size{Min: logwriter.DefaultLineBytes, Max: logwriter.DefaultLineBytes}
	fl.Var(&w.LineBytes, "line-bytes", "line length: N, or MIN-MAX uniformly distributed, each a byte size (200, 1KiB)")
	fl.StringVar(&f.format, "format", string(logline.JSON), "line format: json, logfmt or plain")
	fl.DurationVar(&w.Interval, "write-interval", logwriter.DefaultInterval, "the writer writes the lines that came due once per interval")
	fl.DurationVar(&w.RotateEvery, "rotate-every", 0, "rotate every file this often (0: never)")
	fl.StringVar(&f.rotateMode, "rotate-mode", string(logwriter.RotateRename), "rotation: rename or copytruncate")
	fl.IntVar(&w.Keep, "keep", logwriter.DefaultKeep, "rotated files kept per file")
	fl.StringVar(&f.layout, "layout", string(logwriter.LayoutFlat), "file layout: flat ({dir}/app-N.log) or kubernetes ({dir}/pods/<ns>_<pod>_<uid>/<container>/0.log, {dir}/containers/*.log symlinks)")
	fl.StringVar(&f.fsync, "fsync", string(logwriter.FsyncNone), "writer fsync policy: none, rotate or write (after every batch)")
	fl.Uint64Var(&w.Seed, "seed", 1, "line length PRNG seed")
	fl.IntVar(&f.cfg.AgentPID, "agent-pid", 0, "measure a running agent instead of starting one")
	fl.StringVar(&f.agentLog, "agent-log", "", "write the agent's stdout and stderr to `FILE` (default: kept in the scratch directory, its tail shown if the agent fails)")
	fl.StringVar(&f.cfg.AgentConfig, "agent-config", "", "agent config template `FILE`, rendered with the placeholders to {config}")
	fl.StringVar(&f.sink, "sink", string(pipeline.SinkCount), "receiver: count (accounting only) or serve (the durable ingest server in-process)")
	fl.StringVar(&f.cfg.SinkAddr, "sink-addr", pipeline.DefaultSinkAddr, "receiver's OTLP/HTTP listen address ({endpoint} is http://ADDR)")
	fl.StringVar(&f.cfg.SinkGRPCAddr, "sink-grpc-addr", pipeline.DefaultSinkAddr, "receiver's OTLP/gRPC listen address ({grpc_endpoint} is ADDR, as host:port)")
	fl.DurationVar(&f.cfg.Warmup, "warmup", pipeline.DefaultWarmup, "time the agent gets to start before the first line")
	fl.DurationVar(&f.cfg.Drain, "drain", pipeline.DefaultDrain, "after writing, wait at most this long for the last lines")
	fl.Int64Var(&f.cfg.MaxLoss, "max-loss", 0, "exit 1 when more lines than this are missing")
	fl.StringVar(&f.slo, "slo", "", "latency objective, e.g. p99=500ms,p50=100ms: exit 1 when missed")
	fl.BoolVar(&f.cfg.Syscalls, "syscalls", false, "count the agent's syscalls per line with eBPF (needs root)")
	fl.StringVar(&f.cfg.Pprof, "pprof", "", "write the agent's syscall stacks as a pprof profile to `FILE` (implies --syscalls)")
	fl.StringVar(&f.jsonFile, "json", "", "also write the JSON report (schema otelbench.pipeline/v1) to `FILE` (- for stdout, replacing the table)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no live progress (it is off anyway when stderr is not a terminal)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the run's steps to stderr")
	cmd.AddCommand(newPipelineCompareCmd())
	return cmd
}

func (f *pipelineFlags) config(cmd *cobra.Command) (pipeline.Config, error) {
	c := f.cfg
	var err error
	c.Writer.Format = logline.Format(f.format)
	c.Writer.RotateMode = logwriter.RotateMode(f.rotateMode)
	c.Writer.Layout = logwriter.Layout(f.layout)
	c.Writer.Fsync = logwriter.Fsync(f.fsync)
	c.Sink = pipeline.SinkMode(f.sink)
	if c.SLO, err = pipeline.ParseSLO(f.slo); err != nil {
		return c, exitcode.Usagef("--slo: %v", err)
	}
	if err := c.Validate(); err != nil {
		return c, exitcode.UsageError(err)
	}
	stderr := cmd.ErrOrStderr()
	if !f.noProgress && isTerminal(stderr) {
		c.Progress = stderr
	}
	if f.verbose {
		c.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	return c, nil
}

func runPipeline(ctx context.Context, cmd *cobra.Command, f *pipelineFlags) error {
	cfg, err := f.config(cmd)
	if err != nil {
		return err
	}
	if f.agentLog != "" {
		lf, err := os.Create(f.agentLog)
		if err != nil {
			return fmt.Errorf("agent log: %w", err)
		}
		defer lf.Close()
		cfg.AgentOutput = lf
	}
	rep, err := pipeline.Run(ctx, cfg)
	if errors.Is(err, pipeline.ErrInvalidConfig) || errors.Is(err, logwriter.ErrInvalidConfig) {
		return exitcode.UsageError(err)
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.jsonFile == "-" {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
		if err == nil && f.jsonFile != "" {
			err = writeJSONFile(f.jsonFile, rep)
		}
	}
	if err != nil {
		return err
	}
	return rep.Check()
}

func newPipelineCompareCmd() *cobra.Command {
	var base, head []string
	var alpha, maxRegression float64
	cmd := &cobra.Command{
		Use:   "compare --base GLOB --head GLOB",
		Short: "Compare two sets of pipeline reports (A/B of two agent builds or configs)",
		Long: `compare reads pipeline JSON reports of two sets of runs, alternated A/B on the
same machine, and compares each figure (CPU per 1,000 lines, syscalls per line,
peak RSS, latency p50/p99, missing, duplicates) with the Mann-Whitney U test,
as benchstat and otelbench compare do. Exit status 1 when a figure of the head
is significantly worse than the base by more than --max-regression percent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := globReports(base)
			if err != nil {
				return err
			}
			h, err := globReports(head)
			if err != nil {
				return err
			}
			c := pipeline.CompareReports(b, h, alpha, maxRegression)
			if err := c.WriteText(cmd.OutOrStdout(), fmt.Sprintf("base (%d)", len(b)), fmt.Sprintf("head (%d)", len(h))); err != nil {
				return err
			}
			if r := c.Regressions(); len(r) > 0 {
				return exitcode.New(exitcode.Failure, fmt.Errorf("%d figures regressed by more than %g%%", len(r), maxRegression))
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&base, "base", nil, "base reports (file or glob, repeatable)")
	cmd.Flags().StringArrayVar(&head, "head", nil, "head reports (file or glob, repeatable)")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level of the U test")
	cmd.Flags().Float64Var(&maxRegression, "max-regression", 5, "percent a significant change may worsen a figure before exit 1")
	return cmd
}

func globReports(patterns []string) ([]*pipeline.Report, error) {
	var paths []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, exitcode.Usagef("%s: %v", p, err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, exitcode.Usagef("no reports match %v", patterns)
	}
	return pipeline.ReadReports(paths)
}
