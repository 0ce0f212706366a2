package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/otelbench/otelbench/internal/bytesize"
	"github.com/otelbench/otelbench/internal/dashboard"
	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/store"
)

// serveTuningFlags are the flags hidden from serve --help: knobs for
// benchmarks and unusual machines, documented in docs/serve-tuning.md.
var serveTuningFlags = []string{
	"queue-bytes", "queue-requests", "inflight-bytes", "max-rejecting", "max-lag-records",
	"projection-lag", "traces-file", "no-projection",
	"max-records", "max-conns-per-source", "min-body-rate",
	"grpc-max-recv", "grpc-max-streams", "grpc-max-requests",
}

// authTokenEnv supplies --auth-token without putting it on the command line
// (where ps(1) shows it).
const authTokenEnv = "OTELBENCH_AUTH_TOKEN"

// serveFlags are the serve flags parsed into ingestsrv.Config, or into the
// process, when the command runs.
type serveFlags struct {
	sync     string
	memLimit string
	maxDisk  string
}

func newServeCmd() *cobra.Command {
	var (
		cfg ingestsrv.Config
		sf  serveFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a durable OTLP/HTTP and OTLP/gRPC ingest target (segment log, group commit, SQLite)",
		Long: `serve accepts OTLP/HTTP (/v1/logs, /v1/metrics, /v1/traces; protobuf or
JSON; gzip or zstd) and OTLP/gRPC (--grpc-addr, and on --addr too), and answers
200 (gRPC: OK) only once the data is on disk in its raw log (group commit, fsync per
--sync). Overload, shutdown and connections past --max-conns get 503 +
Retry-After (gRPC: UNAVAILABLE + RetryInfo); hostile input a 4xx naming the
limit (gRPC codes: docs/grpc.md). Raw payloads go --raw-retention after
projection; projected data --retention after arrival, sooner past --max-disk,
where ingest answers 507 until that has freed space.
/healthz, /api/v1/stats and /metrics report what was stored and rejected;
/healthz is 503 for good once an fsync failed. SIGINT/SIGTERM drain and exit 0.
Dashboard /ui/, query API /api/v1/.
Sizes take units (8MiB, 1GB). Tuning flags: docs/serve-tuning.md.`,
		Example: `  otelbench serve
  otelbench serve --addr 127.0.0.1:4318 --data /var/lib/otelbench --pprof
  otelbench serve --grpc-addr ""           # OTLP/HTTP only
  OTELBENCH_AUTH_TOKEN=s3cret otelbench serve --addr 0.0.0.0:4318 --auth-ingest`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sf.bind(&cfg); err != nil {
				return err
			}
			limit, err := ingestsrv.MemoryLimit(sf.memLimit, os.Getenv("GOMEMLIMIT"))
			if err != nil {
				return exitcode.UsageError(err)
			}
			if limit >= 0 {
				debug.SetMemoryLimit(limit)
			}
			cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			return runServe(cmd, cfg)
		},
	}
	bindServeFlags(cmd.Flags(), &cfg, &sf)
	bindServeTuningFlags(cmd.Flags(), &cfg)
	return cmd
}

// bindServeFlags binds the flags serve --help shows.
func bindServeFlags(f *pflag.FlagSet, cfg *ingestsrv.Config, sf *serveFlags) {
	f.StringVar(&cfg.Addr, "addr", ingestsrv.DefaultAddr, "listen address (loopback by default)")
	f.StringVar(&cfg.GRPC.Addr, "grpc-addr", ingestsrv.DefaultGRPCAddr, "OTLP/gRPC listen address (empty: none; --addr answers gRPC too)")
	f.StringVar(&cfg.Dir, "data", ingestsrv.DefaultDataDir, "data directory (raw log and SQLite databases)")
	f.StringVar(&cfg.AuthToken, "auth-token", "", "require 'Authorization: Bearer TOKEN' on the API, /metrics and pprof; browsers log in at /ui/login (or $"+authTokenEnv+")")
	f.BoolVar(&cfg.AuthIngest, "auth-ingest", false, "require the bearer token on the OTLP routes too")
	f.BoolVar(&cfg.Pprof, "pprof", false, "mount net/http/pprof under /debug/pprof/")
	bytesize.Int64Var(f, &cfg.MaxBody, "max-body", ingestsrv.DefaultMaxBody, "request body limit, before and after decompression (413 beyond)")
	f.IntVar(&cfg.MaxConns, "max-conns", ingestsrv.DefaultMaxConns, "connections served at most; more get 503 + Retry-After")
	f.StringVar(&sf.sync, "sync", string(store.SyncFull), "durability: full (fsync before every 200), normal or off (not durable)")
	f.StringVar(&sf.memLimit, "memory-limit", "", "soft limit of the Go heap (1GiB, off); default $GOMEMLIMIT, else "+bytesize.Format(ingestsrv.DefaultMemoryLimit)+"; SQLite's memory comes on top")
	f.DurationVar(&cfg.RawRetention, "raw-retention", store.DefaultRawRetention, "delete raw payloads this long after their projection is durable")
	f.BoolVar(&cfg.KeepRaw, "keep-raw", false, "never delete raw payloads (the raw log grows without bound)")
	f.DurationVar(&cfg.Retention, "retention", store.DefaultRetention, "delete projected data (logs, spans, points) this long after it arrived (0: keep forever)")
	f.StringVar(&sf.maxDisk, "max-disk", "", "bound on the data directory's used size: a size (10GiB) or a share of its filesystem (80%); past it the oldest data goes first and ingest answers 507 until space is freed")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", ingestsrv.DefaultShutdownTimeout, "bound on the drain at shutdown")
}

// bindServeTuningFlags binds the tuning knobs, hidden from --help and
// documented in docs/serve-tuning.md.
func bindServeTuningFlags(f *pflag.FlagSet, cfg *ingestsrv.Config) {
	bytesize.Int64Var(f, &cfg.QueueBytes, "queue-bytes", store.DefaultQueueBytes, "group-commit queue limit in payload bytes (503 beyond)")
	f.IntVar(&cfg.QueueRequests, "queue-requests", store.DefaultQueueRequests, "group-commit queue limit in requests (503 beyond)")
	bytesize.Int64Var(f, &cfg.InflightBytes, "inflight-bytes", ingestsrv.DefaultInflightBytes, "memory budget of requests in flight (503 beyond)")
	f.IntVar(&cfg.MaxRecords, "max-records", ingestsrv.DefaultMaxRecords, "records (log records, data points, spans) a request may hold, rejected ones included (413 beyond; negative: no cap)")
	f.IntVar(&cfg.MaxConnsPerSource, "max-conns-per-source", ingestsrv.DefaultMaxConnsPerSource, "connections served at most for one client IP address (at most --max-conns); more get 503 + Retry-After and are closed")
	f.Int64Var(&cfg.MinBodyRate, "min-body-rate", ingestsrv.DefaultMinBodyRate, "slowest average rate in bytes/s at which a request body may arrive after its first 5 s; slower bodies get 408 and the connection is closed (negative: no minimum)")
	f.IntVar(&cfg.MaxRejecting, "max-rejecting", ingestsrv.DefaultMaxRejecting, "connections past --max-conns answered 503 at a time; more are closed unanswered")
	f.Int64Var(&cfg.MaxLagRecords, "max-lag-records", 0, "answer 503 while projection trails by more records than this (0: no bound)")
	f.DurationVar(&cfg.ProjectLag, "projection-lag", store.DefaultProjectLag, "while ingest saturates the CPU, projection waits until it trails by this long, then runs anyway; 0 never waits")
	f.BoolVar(&cfg.TracesFile, "traces-file", ingestsrv.DefaultTracesFile, "a new --data dir keeps spans in traces.db with a projector of its own (false: one file, one projector)")
	f.BoolVar(&cfg.NoProjection, "no-projection", false, "store raw payloads only, no relational projection (write-path benchmarks)")
	bytesize.Int64Var(f, &cfg.GRPC.MaxRecv, "grpc-max-recv", 0, "largest gRPC message, before and after decompression (RESOURCE_EXHAUSTED beyond; default --max-body)")
	f.Uint32Var(&cfg.GRPC.MaxStreams, "grpc-max-streams", ingestsrv.DefaultGRPCMaxStreams, "concurrent gRPC streams per connection")
	f.IntVar(&cfg.GRPC.MaxRequests, "grpc-max-requests", ingestsrv.DefaultGRPCMaxRequests, "gRPC requests served at once over all connections; more get UNAVAILABLE with RetryInfo")
	for _, name := range serveTuningFlags {
		_ = f.MarkHidden(name)
	}
}

// bind puts the flags that need parsing into cfg, turns the flags' zero
// values into the Config's, and validates the result.
func (sf serveFlags) bind(cfg *ingestsrv.Config) error {
	cfg.Sync = store.SyncMode(sf.sync)
	if cfg.ProjectLag == 0 {
		cfg.ProjectLag = -1 // the flag's 0 is "never", the Config's is "default"
	}
	var err error
	if cfg.MaxDiskBytes, cfg.MaxDiskShare, err = ingestsrv.ParseMaxDisk(sf.maxDisk); err != nil {
		return exitcode.UsageError(err)
	}
	if cfg.Retention == 0 {
		cfg.Retention = -1 // the flag's 0 is "forever", the Config's is "default"
	}
	if cfg.AuthToken == "" {
		cfg.AuthToken = os.Getenv(authTokenEnv)
	}
	if err := cfg.Validate(); err != nil {
		return exitcode.UsageError(err)
	}
	return nil
}

// runServe listens, opens the store under cfg.Dir and serves ingest, the
// query API and the dashboard until the command's context ends.
func runServe(cmd *cobra.Command, cfg ingestsrv.Config) error {
	// Listen before the store creates --data: a busy port leaves nothing behind.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%w (is another server there? choose an address with --addr)", err)
	}
	var grpcLn net.Listener
	closeListeners := func() error { return ln.Close() }
	if cfg.GRPC.Addr != "" {
		if grpcLn, err = net.Listen("tcp", cfg.GRPC.Addr); err != nil {
			return errors.Join(fmt.Errorf("%w (is another server there? choose an address with --grpc-addr, or --grpc-addr \"\" for none)", err), ln.Close())
		}
		closeListeners = func() error { return errors.Join(ln.Close(), grpcLn.Close()) }
	}
	srv, err := ingestsrv.New(cmd.Context(), cfg)
	if err != nil {
		return errors.Join(err, closeListeners())
	}
	runTail, err := dashboard.Attach(srv.Store().ReadDB(), srv.Store().ProjectedNotify, srv.Mount, cfg.Logger)
	if err != nil {
		return errors.Join(err, closeListeners(), srv.Close(context.Background()))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "otelbench: dashboard at %s\n", dashboardURL(ln.Addr()))
	g, ctx := errgroup.WithContext(cmd.Context())
	g.Go(func() error { return runTail(ctx) })
	g.Go(func() error { return srv.ServeWithGRPC(ctx, ln, grpcLn) })
	return g.Wait()
}

// dashboardURL is the dashboard's address for a browser on this host: a
// wildcard listen address is reached through loopback.
func dashboardURL(addr net.Addr) string {
	host, port := "127.0.0.1", ""
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
		if !tcp.IP.IsUnspecified() {
			host = tcp.IP.String()
		}
	}
	return "http://" + net.JoinHostPort(host, port) + dashboard.DefaultBase + "/"
}
