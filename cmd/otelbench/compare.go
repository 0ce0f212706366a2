package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/otelbench/otelbench/internal/abstats"
	"github.com/otelbench/otelbench/internal/compare"
	"github.com/otelbench/otelbench/internal/compare/shellwords"
	"github.com/otelbench/otelbench/internal/exitcode"
)

// compareFlags are the compare flags parsed into compare.Config, or that
// choose what is done with its report, when the command runs.
type compareFlags struct {
	load, format, jsonOut, bfmt string
	failOn                      []string
	noProgress, quiet           bool
}

func newCompareCmd() *cobra.Command {
	var (
		cfg compare.Config
		cf  compareFlags
	)
	cmd := &cobra.Command{
		Use:   "compare BASE HEAD",
		Short: "A/B two versions of a server under identical load, with a CI gate",
		Long: `compare builds BASE and HEAD (git refs, checked out as temporary detached
worktrees, or directories, used as they are), then runs each side's server under
the same 'otelbench load' in interleaved ABBA rounds, with a fresh server, port
and data directory every round. Per round it samples req/s, records/s, p50 and
p99 latency, server CPU per 1,000 requests, peak RSS, open fds and errors, and
compares the sides like benchstat: median ± 95% interval, Mann-Whitney U test
at alpha 0.05, "~" when not significant.

A gate (--fail-on) fails only when a change is significant and its estimated
ratio lies beyond the limit in the metric's worse direction.

Every metric also shows the smallest change the rounds could have detected
at the noise they showed, alpha and 80% power ("detects ±X%"): a "~" means
no change larger than that. A gate whose limit is below it is blind: its pass
would say nothing, so compare says so, suggests the rounds that would see the
limit, and exits 3 unless --allow-blind names the metric.

Placeholders: --build runs with sh -c in the side's source directory, with
{out} (binary to write) and {src}; --serve is split into words and exec'd
(no shell) with {bin}, {addr}, {data} and {src}.

Exit codes: 0 pass (or byte-identical binaries), 1 regression, 2 usage, build
or run error, 3 inconclusive (too few rounds to ever be significant, or a
gate blind to its limit).`,
		Example: `  otelbench compare main HEAD
  otelbench compare --rounds 6 --load '--duration 3s --concurrency 8' HEAD~1 HEAD
  otelbench compare --fail-on throughput:-5% --fail-on p99:+10% --format markdown v0.3.0 .
  otelbench compare --build 'make otelcol && cp bin/otelcol {out}' \
      --serve '{bin} --config {src}/bench.yaml --set=receivers.otlp.protocols.http.endpoint={addr}' main HEAD
  otelbench compare --self-check HEAD`,
		Args: usageArgs(cobra.RangeArgs(0, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cf.bind(&cfg, args, cmd.ErrOrStderr()); err != nil {
				return err
			}
			rep, err := compare.Run(cmd.Context(), cfg)
			if err != nil {
				if errors.Is(err, compare.ErrUsage) {
					return exitcode.UsageError(err)
				}
				return exitcode.New(exitcode.Usage, fmt.Errorf("compare: %w", err))
			}
			return cf.report(rep, cmd.OutOrStdout())
		},
	}
	bindCompareFlags(cmd.Flags(), &cfg, &cf)
	return cmd
}

// bindCompareFlags binds the compare flags into cfg and cf.
func bindCompareFlags(f *pflag.FlagSet, cfg *compare.Config, cf *compareFlags) {
	f.StringVar(&cfg.Repo, "repo", ".", "git repository the refs are resolved in")
	f.StringVar(&cfg.Build, "build", compare.DefaultBuild, "build command (sh -c in the source dir; {out} {src})")
	f.StringVar(&cfg.Serve, "serve", compare.DefaultServe, "server command ({bin} {addr} {data} {src}); any OTLP/HTTP server")
	f.StringVar(&cf.load, "load", "", "extra 'otelbench load' flags, e.g. '--mix logs=1,traces=1 --records 10 --concurrency 64 --duration 10s'")
	f.IntVar(&cfg.Warmup, "warmup", compare.DefaultWarmup, "discarded warmup rounds (each runs both sides)")
	f.IntVar(&cfg.Rounds, "rounds", compare.DefaultRounds, "measured rounds per side, in ABBA order")
	f.StringArrayVar(&cf.failOn, "fail-on", nil, "gate METRIC:LIMIT%, repeatable (default throughput:-5% and p99:+10%; 'none' for no gate); metrics: throughput records p50 p99 cpu rss fds errors syscalls")
	f.Float64Var(&cfg.Alpha, "alpha", abstats.DefaultAlpha, "significance level of the Mann-Whitney U test")
	f.BoolVar(&cfg.Syscalls, "syscalls", false, "count server syscalls per request with eBPF (root)")
	f.BoolVar(&cfg.SelfCheck, "self-check", false, "A/A: compare one ref or directory (default HEAD) with itself to measure false positives")
	f.StringVar(&cf.format, "format", "text", "report format on stdout: text or markdown")
	f.StringVar(&cf.jsonOut, "json", "", "also write the report as JSON (otelbench.compare/v1) to `FILE`")
	f.StringVar(&cf.bfmt, "benchfmt", "", "also write every round in Go benchmark format to `FILE` (for benchstat -col /side)")
	f.BoolVar(&cf.noProgress, "no-progress", false, "no progress bar (it is off anyway when stderr is not a terminal)")
	f.BoolVarP(&cf.quiet, "quiet", "q", false, "no step log on stderr")
	f.StringSliceVar(&cfg.AllowBlind, "allow-blind", nil, "let gates pass whose limit is below the change the rounds can detect: --allow-blind for all, --allow-blind=p99,cpu for some (default: such a gate exits 3)")
	f.Lookup("allow-blind").NoOptDefVal = compare.AllowBlindAll
	f.DurationVar(&cfg.ReadyTimeout, "ready-timeout", compare.DefaultReadyTimeout, "how long a server may take to answer HTTP")
	f.DurationVar(&cfg.StopGrace, "stop-grace", compare.DefaultStopGrace, "SIGTERM to SIGKILL grace for servers")
	f.DurationVar(&cfg.BuildTimeout, "build-timeout", compare.DefaultBuildTimeout, "bound on each side's build")
}

// bind puts the positional arguments and the flags that need parsing into
// cfg, and validates the result; stderr takes the progress bar or the step
// log.
func (cf compareFlags) bind(cfg *compare.Config, args []string, stderr io.Writer) error {
	if err := bindCompareArgs(cfg, args); err != nil {
		return err
	}
	switch {
	case cfg.Warmup < 0:
		return exitcode.Usagef("--warmup %d is negative (0: none)", cfg.Warmup)
	case cfg.Warmup == 0:
		cfg.Warmup = -1 // the flag's 0 is "none", the Config's is "default"
	}
	var err error
	if cfg.Load, err = shellwords.Split(cf.load); err != nil {
		return exitcode.Usagef("--load: %v", err)
	}
	if cfg.Gates, err = parseGates(cf.failOn); err != nil {
		return exitcode.UsageError(err)
	}
	if err := checkCompareFormat(cf.format); err != nil {
		return err
	}
	if !cf.noProgress && compareTTY(stderr) {
		cfg.Progress = stderr
	} else if !cf.quiet {
		cfg.Log = stderr
	}
	if err := cfg.Validate(); err != nil {
		return exitcode.UsageError(err)
	}
	return nil
}

// report writes rep's files and its report on out, and returns the exit
// code its gates chose.
func (cf compareFlags) report(rep *compare.Report, out io.Writer) error {
	if err := writeCompareFiles(rep, cf.jsonOut, cf.bfmt); err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	var err error
	if cf.format == "markdown" {
		err = rep.WriteMarkdown(out)
	} else {
		err = rep.WriteText(out)
	}
	if err != nil {
		return exitcode.New(exitcode.Usage, fmt.Errorf("write report: %w", err))
	}
	if rep.ExitCode != 0 {
		return exitcode.New(rep.ExitCode, nil)
	}
	return nil
}

// checkCompareFormat refuses a --format other than text or markdown, and
// points the file formats to the flags that write them.
func checkCompareFormat(format string) error {
	switch format {
	case "text", "markdown":
		return nil
	case "benchfmt":
		return exitcode.Usagef("--format benchfmt: the Go benchmark format is written to a file: use --benchfmt FILE")
	case "json":
		return exitcode.Usagef("--format json: the JSON report is written to a file: use --json FILE")
	}
	return exitcode.Usagef("--format %q: want text or markdown (files: --json FILE, --benchfmt FILE)", format)
}

// bindCompareArgs puts the positional arguments into cfg.
func bindCompareArgs(cfg *compare.Config, args []string) error {
	switch {
	case cfg.SelfCheck && len(args) == 2:
		return exitcode.Usagef("--self-check takes one ref or directory, got %d", len(args))
	case cfg.SelfCheck && len(args) == 1:
		cfg.Base = args[0]
	case cfg.SelfCheck:
		cfg.Base = "HEAD"
	case len(args) != 2:
		return exitcode.Usagef("compare needs BASE and HEAD, got %d argument(s)", len(args))
	default:
		cfg.Base, cfg.Head = args[0], args[1]
	}
	return nil
}

// parseGates parses --fail-on values; none given means the defaults, and
// "none" means no gate.
func parseGates(specs []string) ([]compare.Gate, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	gates := []compare.Gate{}
	for _, s := range specs {
		for _, part := range strings.Split(s, ",") {
			if strings.TrimSpace(part) == "none" {
				continue
			}
			g, err := compare.ParseGate(part)
			if err != nil {
				return nil, fmt.Errorf("--fail-on: %w", err)
			}
			gates = append(gates, g)
		}
	}
	return gates, nil
}

func writeCompareFiles(rep *compare.Report, jsonPath, benchPath string) error {
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{{jsonPath, rep.WriteJSON}, {benchPath, rep.WriteBenchfmt}} {
		if f.path == "" {
			continue
		}
		if err := compareWriteFile(f.path, f.write); err != nil {
			return err
		}
	}
	return nil
}

func compareWriteFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(fh); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func compareTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
