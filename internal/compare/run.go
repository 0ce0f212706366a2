package compare

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/abstats"
	"github.com/otelbench/otelbench/internal/compare/shellwords"
)

// Run builds both sides, runs the schedule and returns the report. Errors
// are run errors (exit 2 territory): bad configuration (wrapping
// ErrUsage), an unresolvable side (*SpecError), a failed build
// (*BuildError), a server that would not start or died (*ServerError), a
// load without a report (*LoadError). Worktrees, servers and temporary
// files are cleaned up on every path, including a cancelled ctx.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	serveWords, _ := shellwords.Split(c.Serve) // validated
	if c.LoadBinary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find load binary: %w", err)
		}
		c.LoadBinary = exe
	}
	sampler, err := newProcSampler(c.ProcRoot)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(c.TempDir, "otelbench-compare-")
	if err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"bin", "data", "logs", "load"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return nil, fmt.Errorf("create work dir: %w", err)
		}
	}

	if a := alpha(c.Alpha); !abstats.CanDetect(c.Rounds, c.Rounds, a) {
		fmt.Fprintf(c.Log, "compare: warning: %d rounds per side can never show a significant difference at α=%g (needs %d): the verdict will be inconclusive\n",
			c.Rounds, a, abstats.MinSamples(a))
	}
	r := &runner{cfg: c, tmp: tmp, serve: serveWords, procs: sampler}
	rep := newReport(c)
	if err := r.prepare(ctx, rep); err != nil {
		r.cleanup()
		return nil, err
	}
	defer r.cleanup()
	if rep.Identical {
		rep.finish(c)
		return rep, nil
	}
	if err := r.rounds(ctx, rep); err != nil {
		return nil, err
	}
	rep.finish(c)
	return rep, nil
}

// runner holds the state of one Run.
type runner struct {
	cfg      Config
	tmp      string
	serve    []string
	procs    *procSampler
	sides    [2]*SideInfo
	cleanups []func()
	grpcOff  map[string]bool // per binary: the default server gets --grpc-addr=
}

func (r *runner) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// prepare resolves and builds both sides and notes identical binaries.
func (r *runner) prepare(ctx context.Context, rep *Report) error {
	names := [2]string{"base", "head"}
	specs := [2]string{r.cfg.Base, r.cfg.Head}
	n := 2
	if r.cfg.SelfCheck {
		n = 1
	}
	for i := 0; i < n; i++ {
		info, cleanup, err := resolveSide(ctx, r.cfg.Repo, specs[i], names[i], r.tmp)
		r.cleanups = append(r.cleanups, cleanup)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.cfg.Log, "compare: building %s %s in %s\n", info.Name, info.Short(), info.Dir)
		start := time.Now()
		if err := build(ctx, r.cfg.Build, &info, filepath.Join(r.tmp, "bin", names[i]), r.cfg.BuildTimeout); err != nil {
			return err
		}
		fmt.Fprintf(r.cfg.Log, "compare: built %s in %.1fs (sha256 %.12s)\n", info.Name, time.Since(start).Seconds(), info.SHA256)
		r.sides[i] = &info
	}
	if r.cfg.SelfCheck {
		head := *r.sides[0]
		head.Name = "head"
		r.sides[1] = &head
	}
	rep.Base, rep.Head = *r.sides[0], *r.sides[1]
	rep.Identical = !r.cfg.SelfCheck && r.sides[0].SHA256 == r.sides[1].SHA256
	return nil
}

// rounds runs the ABBA schedule and records every measured run.
func (r *runner) rounds(ctx context.Context, rep *Report) error {
	steps := schedule(r.cfg.Warmup, r.cfg.Rounds)
	bar := newProgress(ctx, r.cfg.Progress, len(steps))
	defer bar.close()
	for i, st := range steps {
		side := r.sides[st.Side]
		kind := "round"
		if st.Warmup {
			kind = "warmup"
		}
		fmt.Fprintf(r.cfg.Log, "compare: %s %d/%d %s\n", kind, st.Round+1, map[bool]int{true: r.cfg.Warmup, false: r.cfg.Rounds}[st.Warmup], side.Name)
		bar.describe(fmt.Sprintf("%s %d %s", kind, st.Round+1, side.Name))
		m, err := r.round(ctx, side, i)
		if err != nil {
			return fmt.Errorf("%s %d: %w", kind, st.Round+1, err)
		}
		bar.increment()
		rep.Runs = append(rep.Runs, RunSample{Seq: i, Side: side.Name, Round: st.Round, Warmup: st.Warmup, Metrics: m})
	}
	return nil
}

// round runs one side once: a fresh server on a fresh port and data
// directory, one load, one sample of every metric.
func (r *runner) round(ctx context.Context, side *SideInfo, seq int) (map[string]float64, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	tag := fmt.Sprintf("%03d-%s", seq, side.Name)
	data := filepath.Join(r.tmp, "data", tag)
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	defer os.RemoveAll(data)
	vars := map[string]string{"bin": side.Binary, "addr": addr, "data": data, "src": side.Dir}
	argv := make([]string, len(r.serve))
	for i, w := range r.serve {
		argv[i] = expand(w, vars)
	}
	if r.cfg.Serve == DefaultServe && r.servesGRPCPort(ctx, side.Binary) {
		argv = append(argv, "--grpc-addr=")
	}
	srv, err := startServer(argv, side.Dir, addr, filepath.Join(r.tmp, "logs", tag+".log"))
	if err != nil {
		return nil, &ServerError{Side: side.Name, Err: err}
	}
	defer srv.stop(r.cfg.StopGrace)
	srvErr := func(err error) error {
		return &ServerError{Side: side.Name, Err: err, Log: srv.logTail(), Path: srv.logPath}
	}
	if err := srv.waitReady(ctx, r.cfg.ReadyTimeout); err != nil {
		return nil, srvErr(err)
	}
	cpu0, err := r.procs.cpuSeconds(srv.pid())
	if err != nil {
		return nil, srvErr(err)
	}
	tracer := startSyscallTrace(ctx, r.cfg.Syscalls, srv.pid())
	jsonPath := filepath.Join(r.tmp, "load", tag+".json")
	lctx, cancel := context.WithTimeout(ctx, r.cfg.LoadTimeout)
	lr, loadErr := runLoad(lctx, loadArgs(r.cfg.LoadBinary, addr, jsonPath, r.cfg.Load), jsonPath, side.Name)
	cancel()
	syscalls, traceErr := tracer.stop()
	if srv.exited() {
		return nil, srvErr(fmt.Errorf("exited during the load: %v", srv.waitErr))
	}
	if loadErr != nil {
		return nil, loadErr
	}
	if traceErr != nil {
		return nil, fmt.Errorf("trace syscalls: %w", traceErr)
	}
	ps, err := r.procs.sample(srv.pid())
	if err != nil {
		return nil, srvErr(err)
	}
	m := map[string]float64{
		MetricThroughput: lr.RequestsPerSecond,
		MetricRecords:    lr.RecordsPerSecond,
		MetricP50:        lr.P50,
		MetricP99:        lr.P99,
		MetricCPU:        (ps.CPUSeconds - cpu0) / lr.Requests * 1000,
		MetricRSS:        ps.PeakRSS,
		MetricFDs:        ps.FDs,
		MetricErrors:     lr.Errors,
	}
	if r.cfg.Syscalls {
		m[MetricSyscalls] = float64(syscalls) / lr.Requests
	}
	return m, nil
}

// servesGRPCPort reports whether bin's serve opens the OTLP/gRPC port
// (127.0.0.1:4317) by default. The default server is then started with
// --grpc-addr= (gRPC stays on its HTTP port), so that rounds, and compares
// run side by side, never fight over one fixed port; a build from before
// the flag existed would refuse it.
func (r *runner) servesGRPCPort(ctx context.Context, bin string) bool {
	if on, ok := r.grpcOff[bin]; ok {
		return on
	}
	out, _ := exec.CommandContext(ctx, bin, "serve", "--help").CombinedOutput()
	on := strings.Contains(string(out), "--grpc-addr")
	if r.grpcOff == nil {
		r.grpcOff = map[string]bool{}
	}
	r.grpcOff[bin] = on
	return on
}
