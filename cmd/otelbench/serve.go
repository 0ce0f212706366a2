package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/otelbench/otelbench/internal/dashboard"
	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/store"
)

// authTokenEnv supplies --auth-token without putting it on the command line
// (where ps(1) shows it).
const authTokenEnv = "OTELBENCH_AUTH_TOKEN"

func newServeCmd() *cobra.Command {
	var (
		cfg      ingestsrv.Config
		sync     string
		priority string
		memLimit string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a durable OTLP/HTTP and OTLP/gRPC ingest target (SQLite, group commit)",
		Long: `serve accepts OTLP/HTTP (POST /v1/logs, /v1/metrics, /v1/traces; protobuf or
JSON; identity, gzip or zstd) and OTLP/gRPC (--grpc-addr; gzip, zstd or
snappy) and answers 200 (gRPC: OK) only once the data is on disk in
a SQLite database (WAL, group commit, fsync per --sync). Overload and shutdown
answer 503 with Retry-After (gRPC: UNAVAILABLE with RetryInfo), connections
past --max-conns (HTTP and gRPC together) included. Raw
payloads are deleted --raw-retention after their projection is durable.
GET /healthz, /api/v1/stats (JSON) and /metrics (Prometheus) report what was
stored and rejected; /healthz answers 503 once an fsync has failed, after which
nothing more is accepted until a restart. SIGINT/SIGTERM drain the queue,
commit and exit 0.`,
		Example: `  otelbench serve
  otelbench serve --addr 127.0.0.1:4318 --data /var/lib/otelbench --pprof
  otelbench serve --grpc-addr ""           # OTLP/HTTP only
  OTELBENCH_AUTH_TOKEN=s3cret otelbench serve --addr 0.0.0.0:4318 --auth-ingest`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Sync = store.SyncMode(sync)
			cfg.ProjectPriority = store.Priority(priority)
			if cfg.ProjectDefer == 0 {
				cfg.ProjectDefer = -1 // the flag's 0 is "never", the Config's is "default"
			}
			if cfg.AuthToken == "" {
				cfg.AuthToken = os.Getenv(authTokenEnv)
			}
			if err := cfg.Validate(); err != nil {
				return exitcode.UsageError(err)
			}
			limit, err := ingestsrv.MemoryLimit(memLimit, os.Getenv("GOMEMLIMIT"))
			if err != nil {
				return exitcode.UsageError(err)
			}
			if limit >= 0 {
				debug.SetMemoryLimit(limit)
			}
			cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			srv, err := ingestsrv.New(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			runTail, err := dashboard.Attach(srv.Store().ReadDB(), srv.Store().ProjectedNotify, srv.Mount, cfg.Logger)
			if err != nil {
				return errors.Join(err, srv.Close(context.Background()))
			}
			g, ctx := errgroup.WithContext(cmd.Context())
			g.Go(func() error { return runTail(ctx) })
			g.Go(func() error { return srv.ListenAndServe(ctx) })
			return g.Wait()
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", ingestsrv.DefaultAddr, "listen address (loopback by default)")
	f.StringVar(&cfg.GRPC.Addr, "grpc-addr", ingestsrv.DefaultGRPCAddr, "OTLP/gRPC listen address (empty: no gRPC)")
	f.IntVar(&cfg.GRPC.MaxRecv, "grpc-max-recv", 0, "largest gRPC message in bytes, before and after decompression (RESOURCE_EXHAUSTED beyond; default --max-body)")
	f.Uint32Var(&cfg.GRPC.MaxStreams, "grpc-max-streams", ingestsrv.DefaultGRPCMaxStreams, "concurrent gRPC streams per connection")
	f.IntVar(&cfg.GRPC.MaxRequests, "grpc-max-requests", ingestsrv.DefaultGRPCMaxRequests, "gRPC requests served at once over all connections; more get UNAVAILABLE with RetryInfo")
	f.StringVar(&cfg.DataDir, "data", ingestsrv.DefaultDataDir, "data directory (SQLite database)")
	f.Int64Var(&cfg.QueueBytes, "queue-bytes", store.DefaultQueueBytes, "group-commit queue limit in payload bytes (503 beyond)")
	f.IntVar(&cfg.QueueRequests, "queue-requests", store.DefaultQueueRequests, "group-commit queue limit in requests (503 beyond)")
	f.Int64Var(&cfg.MaxBody, "max-body", ingestsrv.DefaultMaxBody, "request body limit in bytes, before and after decompression (413 beyond)")
	f.Int64Var(&cfg.InflightBytes, "inflight-bytes", ingestsrv.DefaultInflightBytes, "memory budget of requests in flight (503 beyond)")
	f.IntVar(&cfg.MaxConns, "max-conns", ingestsrv.DefaultMaxConns, "connections served at most; more get 503 + Retry-After and are closed")
	f.IntVar(&cfg.MaxRejecting, "max-rejecting", ingestsrv.DefaultMaxRejecting, "connections past --max-conns answered 503 at a time; more are closed unanswered")
	f.Int64Var(&cfg.MaxLagRecords, "max-lag-records", 0, "answer 503 while projection trails by more records than this (0: no bound)")
	f.StringVar(&priority, "projection-priority", string(store.DefaultPriority), "CPU priority of the projector: idle (SCHED_IDLE) or low (nice 19) let ingest win the CPU under load while the projection lag grows; normal shares it equally")
	f.DurationVar(&cfg.ProjectDefer, "projection-defer", store.DefaultProjectDefer, "while ingest saturates the writer and the CPU, projection waits (below normal priority) until it trails by this long, and catches up when the load falls; 0 never waits")
	f.StringVar(&sync, "sync", string(store.SyncFull), "durability: full (fsync each group commit), normal or off (not durable)")
	f.BoolVar(&cfg.Pprof, "pprof", false, "mount net/http/pprof under /debug/pprof/")
	f.StringVar(&cfg.AuthToken, "auth-token", "", "require 'Authorization: Bearer TOKEN' on the API, /metrics and pprof; browsers log in to the dashboard at /ui/login (or $"+authTokenEnv+")")
	f.BoolVar(&cfg.AuthIngest, "auth-ingest", false, "require the bearer token on the OTLP routes too")
	f.DurationVar(&cfg.RawRetention, "raw-retention", store.DefaultRawRetention, "keep raw payloads this long after their projection is durable, then delete them from raw.db")
	f.BoolVar(&cfg.KeepRaw, "keep-raw", false, "never delete raw payloads (raw.db grows without bound)")
	f.BoolVar(&cfg.TracesFile, "traces-file", true, "a new --data dir keeps spans in traces.db, projected by a second projector beside telemetry.db's (false: one file, one projector, ~15 MB less, a slower catch-up); an existing dir keeps its layout")
	f.BoolVar(&cfg.NoProjection, "no-projection", false, "store raw payloads only, no relational projection (write-path benchmarks)")
	f.StringVar(&memLimit, "memory-limit", "", "soft limit of the Go heap, GOMEMLIMIT syntax (40MiB, 1GiB, off); default $GOMEMLIMIT, else "+strconv.FormatInt(ingestsrv.DefaultMemoryLimit>>20, 10)+"MiB; SQLite's memory comes on top")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", ingestsrv.DefaultShutdownTimeout, "bound on the drain at shutdown")
	return cmd
}
