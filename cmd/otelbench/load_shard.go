package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/loadgen"
)

// shardFlags are load's flags for one part of a load run from many
// machines (docs/distributed-load.md).
type shardFlags struct {
	on    bool // bound: the command takes shard flags and environment
	flags loadgen.ShardFlags
}

func (s *shardFlags) bind(fs *pflag.FlagSet) {
	s.on = true
	fs.StringVar(&s.flags.Shard, "shard", "", "run shard `I/N` of a load spread over N machines: 1/N of the rate (open model) or workers (closed), of --requests, and a seed of its own")
	fs.IntVar(&s.flags.Shards, "shards", 0, "number of shards, the index taken from $"+loadgen.EnvShardIndex+" (as a Kubernetes Indexed Job sets it; default $"+loadgen.EnvShards+")")
	fs.StringVar(&s.flags.StartAt, "start-at", "", "start sending at this RFC 3339 time, e.g. 2026-05-01T10:00:00Z, so shards start together (default $"+loadgen.EnvStartAt+")")
	fs.DurationVar(&s.flags.StartIn, "start-in", 0, "start sending this long from now")
}

// runLoad runs cfg, as a shard when the flags or environment say so.
func (s *shardFlags) runLoad(ctx context.Context, cfg loadgen.Config) (*loadgen.Report, error) {
	if !s.on {
		return loadgen.Run(ctx, cfg)
	}
	f := s.flags
	f.Host, _ = os.Hostname() // the pod name on Kubernetes; none is fine
	plan, ok, err := loadgen.ResolveShard(f, os.Getenv, time.Now())
	if err != nil {
		return nil, exitcode.UsageError(err)
	}
	if !ok {
		return loadgen.Run(ctx, cfg)
	}
	return loadgen.RunShard(ctx, cfg, plan)
}

// set reports whether a shard flag or its environment variable was given.
func (s *shardFlags) set() bool {
	f := s.flags
	return s.on && (f.Shard != "" || f.Shards != 0 || f.StartAt != "" || f.StartIn != 0 ||
		os.Getenv(loadgen.EnvShards) != "" || os.Getenv(loadgen.EnvStartAt) != "")
}
