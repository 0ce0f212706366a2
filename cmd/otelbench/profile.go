package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/google/pprof/profile"
	"github.com/spf13/cobra"

	"github.com/otelbench/otelbench/internal/exitcode"
	prof "github.com/otelbench/otelbench/internal/profile"
)

type profileFlags struct {
	syscalls prof.SyscallConfig
	cpu      bool
	freq     int
	top      int
	pprof    string
	json     string
	attach   string
	sort     string
}

func newProfileCmd() *cobra.Command {
	var f profileFlags
	cmd := &cobra.Command{
		Use:   "profile [flags] (--pid PID | -- CMD [ARGS...])",
		Short: "Profile the syscalls (or CPU hot spots) of a process with eBPF",
		Long: `profile traces a running process (--pid) or a command it starts (after --)
with eBPF, and prints per-syscall counts, errors, latency (avg, p50, p99) and
share of syscall time, like perf trace -s. With --stacks it also records the
user stack of every syscall; --pprof FILE writes them for go tool pprof.
With --cpu it samples on-CPU stacks (kernel and user) at --freq Hz instead.

Needs root, or CAP_BPF and CAP_PERFMON.`,
		Example: `  otelbench profile --pid 1234 --duration 10s
  otelbench profile --stacks --pprof syscalls.pb.gz -- ./tailer -mode inotify
  otelbench profile --cpu --pprof cpu.pb.gz --pid 1234 --duration 30s
  go tool pprof -top syscalls.pb.gz`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && f.syscalls.PID != 0 {
				return exitcode.Usagef("give --pid or a command, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.syscalls.Command = args
			return runProfile(cmd.Context(), cmd, &f)
		},
	}
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	fl.IntVarP(&f.syscalls.PID, "pid", "p", 0, "process to trace (all its threads)")
	fl.DurationVarP(&f.syscalls.Duration, "duration", "d", 0, "stop after this long (default: until Ctrl-C or the process exits)")
	fl.BoolVarP(&f.syscalls.FollowChildren, "follow-children", "f", false, "also trace the target's child processes (existing and new, recursively)")
	fl.BoolVar(&f.syscalls.PerThread, "per-thread", false, "also report per thread (syscall mode)")
	fl.BoolVar(&f.syscalls.Stacks, "stacks", false, "record user stacks at syscall entry (syscall mode; implied by --pprof)")
	fl.BoolVar(&f.syscalls.NoLatency, "no-latency", false, "count calls and errors only, without timing: the lowest overhead (syscall mode)")
	fl.IntVar(&f.syscalls.LatencySample, "latency-sample", 0, fmt.Sprintf("time about 1 in `N` calls and scale times from them; counts and errors stay exact (0 = auto: every call up to %d calls/s, then down to 1/%d of the time; 1 = every call)", prof.AutoFullRate, prof.MaxAutoLatencySample))
	fl.BoolVar(&f.cpu, "cpu", false, "sample on-CPU stacks instead of tracing syscalls")
	fl.IntVar(&f.freq, "freq", prof.DefaultFreq, "CPU sampling frequency per CPU in Hz (--cpu)")
	fl.IntVar(&f.top, "top", 20, "rows to print (0 = all)")
	fl.StringVar(&f.pprof, "pprof", "", "write a pprof profile to `FILE` (gzipped protobuf)")
	fl.StringVar(&f.json, "json", "", "write the syscall report as JSON to `FILE` (- for stdout)")
	fl.StringVar(&f.sort, "sort", string(prof.SortTime), "order rows by time, count, errors or avg (syscall mode)")
	fl.StringVar(&f.attach, "attach", string(prof.DefaultAttach), "syscall tracepoint program type: tp_btf or raw_tp")
	return cmd
}

func runProfile(ctx context.Context, cmd *cobra.Command, f *profileFlags) error {
	out := cmd.OutOrStdout()
	t := &f.syscalls.Target
	t.Stdin, t.Stdout, t.Stderr = cmd.InOrStdin(), out, cmd.ErrOrStderr()
	if f.top < 0 {
		return exitcode.Usagef("--top %d: want 0 or more", f.top)
	}
	if f.cpu {
		if f.json != "" || f.syscalls.PerThread || f.syscalls.Stacks || f.syscalls.NoLatency || f.syscalls.LatencySample != 0 {
			return exitcode.Usagef("--json, --per-thread, --stacks, --no-latency and --latency-sample are syscall-mode flags; --cpu always records stacks")
		}
		cfg := prof.CPUConfig{Target: *t, Freq: f.freq}
		if err := cfg.Validate(); err != nil {
			return exitcode.UsageError(err)
		}
		return runCPUProfile(ctx, cmd, cfg, f)
	}
	f.syscalls.Attach = prof.AttachMode(f.attach)
	sortKey, err := prof.ParseSortKey(f.sort)
	if err != nil {
		return exitcode.UsageError(err)
	}
	if f.syscalls.NoLatency && !cmd.Flags().Changed("sort") {
		sortKey = prof.SortCount
	}
	if f.pprof != "" {
		f.syscalls.Stacks = true
	}
	if err := f.syscalls.Validate(); err != nil {
		return exitcode.UsageError(err)
	}
	rep, err := prof.TraceSyscalls(ctx, f.syscalls)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	rep.Sort(sortKey)
	report := cmd.ErrOrStderr()
	if len(t.Command) == 0 {
		report = out
	}
	if err := rep.WriteText(report, f.top); err != nil {
		return err
	}
	if f.json != "" {
		if err := writeFileWith(f.json, out, rep.WriteJSON); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	if err := writeProfile(report, f.pprof, rep); err != nil {
		return err
	}
	return commandStatus(t, rep.ExitCode)
}

func runCPUProfile(ctx context.Context, cmd *cobra.Command, cfg prof.CPUConfig, f *profileFlags) error {
	rep, err := prof.ProfileCPU(ctx, cfg)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	report := cmd.ErrOrStderr()
	if len(cfg.Command) == 0 {
		report = cmd.OutOrStdout()
	}
	if err := rep.WriteText(report, f.top); err != nil {
		return err
	}
	if err := writeProfile(report, f.pprof, rep); err != nil {
		return err
	}
	return commandStatus(&cfg.Target, rep.ExitCode)
}

// commandStatus passes the exit status of a profiled command through: the
// report is printed, then otelbench exits as the command did.
func commandStatus(t *prof.Target, code int) error {
	if len(t.Command) == 0 || code == 0 {
		return nil
	}
	if code > 0 {
		return exitcode.New(code, nil)
	}
	return nil // -1: we interrupted it (Ctrl-C, --duration)
}

// profiled is a report that converts to a pprof profile (the syscall and the CPU report).
type profiled interface {
	Profile() (*profile.Profile, error)
}

// writeProfile writes rep's pprof profile to path, if one was asked for, and tells report how
// to read it.
func writeProfile(report io.Writer, path string, rep profiled) error {
	if path == "" {
		return nil
	}
	p, err := rep.Profile()
	if err != nil {
		return err
	}
	if err := writeFileWith(path, nil, p.Write); err != nil {
		return err
	}
	fmt.Fprintf(report, "\nwrote %s: go tool pprof -top %s\n", path, path)
	return nil
}

// writeFileWith writes path with write; "-" means stdout.
func writeFileWith(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" && stdout != nil {
		return write(stdout)
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
