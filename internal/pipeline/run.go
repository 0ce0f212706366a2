package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/otelbench/otelbench/internal/linesink"
	"github.com/otelbench/otelbench/internal/logwriter"
)

// Run benchmarks the agent of cfg: it starts the sink, creates the files,
// starts the agent (or attaches to it), writes, drains, stops the agent and
// returns the report with its gates evaluated. A failed gate is not an
// error here: call Report.Check. Errors are setup failures, an agent that
// exited early, and write failures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	work, err := os.MkdirTemp("", "otelbench-pipeline-")
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	defer os.RemoveAll(work)
	wcfg := cfg.Writer
	if wcfg.Dir == "" {
		wcfg.Dir = filepath.Join(work, "logs")
	}
	sk, err := startSink(ctx, cfg.Sink, cfg.SinkAddr, cfg.SinkGRPCAddr, work, cfg.Logger)
	if err != nil {
		return nil, err
	}
	defer sk.close()
	wr, err := logwriter.New(wcfg)
	if err != nil {
		return nil, err
	}
	defer wr.Close()
	wcfg = wr.Config()
	ph := placeholders{"dir": wcfg.Dir, "endpoint": sk.endpoint, "host": sk.host, "port": sk.port,
		"grpc_endpoint": sk.grpcEndpoint, "files": strconv.Itoa(wcfg.Files), "work": work}
	ag, argv, err := launch(cfg, ph, work)
	if err != nil {
		return nil, err
	}
	exit := -1
	stopped := false
	stopAgent := func() {
		if !stopped {
			stopped, exit = true, ag.stop(cfg.StopWait)
		}
	}
	defer stopAgent()
	cfg.Logger.Info("agent started", "pid", ag.pid, "endpoint", sk.endpoint, "grpc_endpoint", sk.grpcEndpoint, "dir", wcfg.Dir)
	if err := ag.waitWarmup(ctx, cfg.Warmup); err != nil {
		return nil, err
	}
	m, err := measure(ctx, cfg, ag)
	if err != nil {
		return nil, err
	}
	rep, err := drive(ctx, cfg, wr, sk.acc, ag, m)
	if err != nil {
		return nil, err
	}
	stopAgent()
	if ag.cmd != nil {
		rep.Agent.ExitCode = &exit
	}
	if err := sk.close(); err != nil {
		cfg.Logger.Warn("sink close", "err", err)
	}
	rep.Config = reportConfig(cfg, wcfg, sk, argv)
	rep.evaluate(cfg.MaxLoss, cfg.SLO)
	return rep, nil
}

// launch renders the agent's config and command line and starts it, or
// attaches to --agent-pid.
func launch(cfg Config, ph placeholders, work string) (*agent, []string, error) {
	if cfg.AgentPID != 0 {
		ag, err := attachAgent(cfg.AgentPID)
		return ag, nil, err
	}
	if cfg.AgentConfig != "" {
		path, err := renderConfig(cfg.AgentConfig, work, ph)
		if err != nil {
			return nil, nil, err
		}
		ph["config"] = path
	}
	argv := make([]string, len(cfg.Agent))
	for i, a := range cfg.Agent {
		argv[i] = ph.render(a)
	}
	ag, err := startAgent(argv, work, cfg.AgentOutput)
	return ag, argv, err
}

// drive writes, drains and collects the figures into a report (without
// config and gates).
func drive(ctx context.Context, cfg Config, wr *logwriter.Writer, acc *linesink.Accounting, ag *agent, m *meter) (*Report, error) {
	wctx, stopWriting := context.WithCancel(ctx)
	defer stopWriting()
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() { // owned: ends when drive returns; stops the writer if the agent dies
		select {
		case <-ag.exited:
			stopWriting()
		case <-watchDone:
		}
	}()
	pctx, stopProgress := context.WithCancel(ctx)
	pr := startProgress(pctx, cfg.Progress, wr.Config().Duration, wr, acc)
	m.start()
	res, werr := wr.Run(wctx)
	drainStart := time.Now()
	if werr == nil && ag.running() == nil {
		drain(ctx, acc, res.Lines, cfg.Drain)
	}
	drainSecs := time.Since(drainStart).Seconds()
	cost := m.stop(res.Lines)
	stopProgress()
	pr.Wait()
	if werr != nil {
		return nil, werr
	}
	if err := ag.running(); err != nil {
		return nil, err
	}
	written := make([]int64, len(res.Streams))
	for i, s := range res.Streams {
		written[i] = s.Lines
	}
	lines, err := acc.Result(written)
	if err != nil {
		return nil, err
	}
	return &Report{
		Schema: Schema, Started: res.Started, DurationSeconds: res.Elapsed.Seconds(), DrainSeconds: drainSecs,
		Interrupted: res.Interrupted || ctx.Err() != nil, Writer: writerStats(res),
		Sink:   SinkStats{Requests: lines.Requests, Unparseable: lines.Unparseable, Foreign: lines.Foreign},
		Totals: lines.Totals, Streams: lines.Streams, Agent: cost.agent, Harness: cost.harness,
	}, nil
}

// drain waits until every written line arrived, timeout passed or ctx
// ended.
func drain(ctx context.Context, acc *linesink.Accounting, lines int64, timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for acc.Distinct() < lines {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}
