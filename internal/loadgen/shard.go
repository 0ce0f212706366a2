package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Shard says which part of a load spread over several machines a report
// covers, and when that part really started; docs/distributed-load.md.
type Shard struct {
	// Index counts from 0; Count is the number of shards of the whole load.
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the wall-clock start the shard was asked to wait for
	// (--start-at, --start-in); absent when it started at once.
	StartAt *time.Time `json:"start_at,omitempty"`
	// FirstSend is the time of the shard's first send, on this host's clock.
	FirstSend time.Time `json:"first_send"`
	// ClockOffset estimates how far the target's clock is ahead of this
	// host's; absent when no estimate could be made.
	ClockOffset *ClockOffset `json:"clock_offset,omitempty"`
	// ClockNote says why there is no ClockOffset, when one was sought.
	ClockNote string `json:"clock_note,omitempty"`
	// Host names the machine (the pod name on Kubernetes).
	Host string `json:"host,omitempty"`
}

// ClockOffset is an estimate of (target clock − host clock): the target's
// time is the host's plus Seconds, within ±UncertaintySeconds.
type ClockOffset struct {
	Seconds            float64 `json:"seconds"`
	UncertaintySeconds float64 `json:"uncertainty_seconds"`
	Source             string  `json:"source"` // how it was measured, e.g. "http-date"
	Samples            int     `json:"samples"`
}

// Environment variables that choose the shard when no flag does: a
// Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in every pod; the shard
// count and start time come from the manifest (docs/distributed-load.md).
const (
	EnvShardIndex = "JOB_COMPLETION_INDEX"
	EnvShards     = "OTELBENCH_SHARDS"
	EnvStartAt    = "OTELBENCH_START_AT"
)

// MaxShards bounds the shard count.
const MaxShards = 10_000

// ShardPlan is this process's part of a load spread over Count processes.
type ShardPlan struct {
	Index, Count int
	// StartAt, when not zero, is the wall-clock time to start sending; all
	// shards given the same StartAt start together (to the accuracy of
	// their clocks, which the report estimates).
	StartAt time.Time
	// ProbeClock estimates the target's clock offset from the Date header
	// of its responses while waiting for StartAt (EstimateClockOffset).
	ProbeClock bool
	// Host names the machine in the report ("" leaves it out).
	Host string
}

// ParseShard parses "I/N": shard I (from 0) of N.
func ParseShard(s string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	if ok {
		index, err = strconv.Atoi(strings.TrimSpace(i))
		if err == nil {
			count, err = strconv.Atoi(strings.TrimSpace(n))
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("%w: shard %q: want I/N, e.g. 0/4", ErrInvalidConfig, s)
	}
	return index, count, ShardPlan{Index: index, Count: count}.Validate()
}

// Validate reports an index outside 0..Count-1 or a count outside 1..MaxShards.
func (p ShardPlan) Validate() error {
	if p.Count < 1 || p.Count > MaxShards {
		return fmt.Errorf("%w: %d shards: want 1..%d", ErrInvalidConfig, p.Count, MaxShards)
	}
	if p.Index < 0 || p.Index >= p.Count {
		return fmt.Errorf("%w: shard index %d: want 0..%d for %d shards", ErrInvalidConfig, p.Index, p.Count-1, p.Count)
	}
	return nil
}

// Apply returns this shard's part of the load cfg describes in total: the
// rate divided by Count; the workers (closed model) or the in-flight bound
// (open model, when given) split, the first shards taking one more where
// they do not divide evenly; a request budget split the same way; and a seed
// of its own (the seed plus the index), so shards send different payloads.
// The duration is every shard's. It refuses a split that would leave a
// shard without workers or without requests (a zero budget means none).
func (p ShardPlan) Apply(cfg Config) (Config, error) {
	if err := p.Validate(); err != nil {
		return cfg, err
	}
	n := int64(p.Count)
	if cfg.Rate == 0 && cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency // the closed model's workers are the load: split them
	}
	if cfg.Rate == 0 && cfg.Concurrency < p.Count {
		return cfg, fmt.Errorf("%w: concurrency %d cannot be split over %d shards: give --concurrency %d or more (the total)", ErrInvalidConfig, cfg.Concurrency, p.Count, p.Count)
	}
	if cfg.Requests > 0 && cfg.Requests < n {
		return cfg, fmt.Errorf("%w: %d requests cannot be split over %d shards (--requests is the total)", ErrInvalidConfig, cfg.Requests, p.Count)
	}
	return cfg.Split(p.Index, p.Count), nil
}

// waitUntil sleeps on clock until t (at once if t is zero or past).
func waitUntil(ctx context.Context, clock Clock, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if d := t.Sub(clock.Now()); d > 0 {
		if err := clock.Sleep(ctx, d); err != nil {
			return fmt.Errorf("wait for the start at %s: %w", t.UTC().Format(time.RFC3339Nano), err)
		}
	}
	return nil
}

// RunShard runs plan's part (ShardPlan.Apply) of the load cfg describes in
// total: it estimates the target's clock offset while it waits for
// plan.StartAt (when ProbeClock is set), starts at StartAt once its payloads
// are built, and records the shard, its first send and the offset in the
// report.
func RunShard(ctx context.Context, cfg Config, plan ShardPlan) (*Report, error) {
	part, err := plan.Apply(cfg)
	if err != nil {
		return nil, err
	}
	if err := part.Validate(); err != nil {
		return nil, err
	}
	part.StartAt = plan.StartAt
	part.firstSend = &firstSend{}
	shard := &Shard{Index: plan.Index, Count: plan.Count, Host: plan.Host}
	if !plan.StartAt.IsZero() {
		t := plan.StartAt.UTC()
		shard.StartAt = &t
	}
	// The probes run beside Run's payload building and wait, so they cannot
	// delay the start; they end before it (probeClock's deadline).
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		if plan.ProbeClock {
			shard.ClockOffset, shard.ClockNote = probeClock(ctx, part, plan.StartAt)
		}
	}()
	rep, err := Run(ctx, part)
	<-probed
	if err != nil {
		return nil, err
	}
	shard.FirstSend = part.firstSend.time()
	if shard.FirstSend.IsZero() { // nothing was sent
		shard.FirstSend = rep.Started
	}
	rep.Shard = shard
	return rep, nil
}

// probeClock estimates the target's clock offset, with up to
// DefaultClockProbes probes ending before the start, or one when there is
// no time to wait. It returns why not when it cannot.
func probeClock(ctx context.Context, cfg Config, startAt time.Time) (*ClockOffset, string) {
	c := cfg.withDefaults()
	probes, deadline := 1, time.Time{}
	if !startAt.IsZero() && startAt.Sub(c.Clock.Now()) > time.Second {
		probes, deadline = DefaultClockProbes, startAt.Add(-100*time.Millisecond)
	}
	client := &http.Client{Timeout: clockProbeTimeout}
	defer client.CloseIdleConnections()
	off, err := EstimateClockOffset(ctx, client, c.Endpoint+"/", c.Clock, probes, deadline)
	if err != nil {
		return nil, err.Error()
	}
	return off, ""
}

// ShardFlags are the command-line and environment inputs of a shard.
type ShardFlags struct {
	Shard   string        // "I/N" (--shard)
	Shards  int           // N (--shards), with the index from JOB_COMPLETION_INDEX
	StartAt string        // RFC 3339 (--start-at)
	StartIn time.Duration // relative start (--start-in)
	Host    string
}

// ResolveShard turns flags, and the environment where they are silent, into
// a plan; ok is false for an ordinary, unsharded run with no start time.
// The shard is --shard I/N, else index JOB_COMPLETION_INDEX of --shards N
// (or OTELBENCH_SHARDS); the start --start-at, --start-in from now, or
// OTELBENCH_START_AT. A start time alone makes a run shard 0 of 1.
func ResolveShard(f ShardFlags, getenv func(string) string, now time.Time) (plan ShardPlan, ok bool, err error) {
	bad := func(format string, args ...any) (ShardPlan, bool, error) {
		return ShardPlan{}, false, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	plan = ShardPlan{Count: 1, Host: f.Host, ProbeClock: true}
	switch {
	case f.Shard != "":
		if plan.Index, plan.Count, err = ParseShard(f.Shard); err != nil {
			return ShardPlan{}, false, err
		}
		if f.Shards != 0 && f.Shards != plan.Count {
			return bad("--shard %s and --shards %d disagree", f.Shard, f.Shards)
		}
		ok = true
	case f.Shards != 0 || getenv(EnvShards) != "":
		n, src := f.Shards, "--shards"
		if n == 0 {
			if n, err = strconv.Atoi(getenv(EnvShards)); err != nil {
				return bad("%s=%q: want a number of shards", EnvShards, getenv(EnvShards))
			}
			src = EnvShards
		}
		idx := getenv(EnvShardIndex)
		if idx == "" {
			return bad("%s %d needs the shard index: --shard I/%d, or %s (set by a Kubernetes Indexed Job)", src, n, n, EnvShardIndex)
		}
		if plan.Index, err = strconv.Atoi(idx); err != nil {
			return bad("%s=%q: want a shard index", EnvShardIndex, idx)
		}
		plan.Count, ok = n, true
		if err := plan.Validate(); err != nil {
			return ShardPlan{}, false, err
		}
	}
	switch {
	case f.StartAt != "" && f.StartIn != 0:
		return bad("give --start-at or --start-in, not both")
	case f.StartIn < 0:
		return bad("--start-in %v is negative", f.StartIn)
	case f.StartIn > 0:
		plan.StartAt = now.Add(f.StartIn)
	case f.StartAt != "" || getenv(EnvStartAt) != "":
		s, src := f.StartAt, "--start-at"
		if s == "" {
			s, src = getenv(EnvStartAt), EnvStartAt
		}
		if plan.StartAt, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return bad("%s %q: want an RFC 3339 time such as 2026-05-01T10:00:00Z", src, s)
		}
	}
	return plan, ok || !plan.StartAt.IsZero(), nil
}
