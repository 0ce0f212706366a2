package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/otelbench/otelbench/internal/bytesize"
	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// loadFlags holds the flags of `load` (and of `bench`, which passes them on).
type loadFlags struct {
	cfg          loadgen.Config
	env          bool // read the OTEL_EXPORTER_OTLP_* environment (load, not bench)
	mix          string
	headers      []string
	protocol     string
	encoding     string
	compression  string
	temporality  string
	runID        string
	stages       string
	findMax      bool
	slo          string
	fm           loadgen.FindMaxConfig
	jsonFile     string
	noProgress   bool
	maxErrorRate float64
	minSuccess   float64
	cpuProfile   string
	shard        shardFlags // load only (load_shard.go)
}

func (f *loadFlags) bind(fs *pflag.FlagSet, endpoint bool) {
	c := &f.cfg
	f.env = endpoint
	if endpoint {
		fs.StringVar(&c.Endpoint, "endpoint", "", "OTLP/HTTP base URL or host:port; /v1/logs, /v1/metrics, /v1/traces are appended (default $OTEL_EXPORTER_OTLP_ENDPOINT, else "+loadgen.DefaultEndpoint+"; grpc: "+loadgen.DefaultGRPCEndpoint+")")
		fs.BoolVar(&c.Insecure, "insecure", false, "a host:port endpoint speaks plain http:// or gRPC without TLS (as OTEL_EXPORTER_OTLP_INSECURE=true)")
		fs.StringVar(&c.TLS.CAFile, "ca-file", "", "PEM CA bundle for https:// endpoints (default $OTEL_EXPORTER_OTLP_CERTIFICATE)")
		fs.StringVar(&c.TLS.CertFile, "cert", "", "PEM client certificate for mTLS (default $OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE)")
		fs.StringVar(&c.TLS.KeyFile, "key", "", "PEM client key for mTLS (default $OTEL_EXPORTER_OTLP_CLIENT_KEY)")
		fs.BoolVar(&c.TLS.InsecureSkipVerify, "insecure-skip-verify", false, "accept any server certificate (test servers only)")
		fs.BoolVar(&f.findMax, "find-max", false, "step the open-model rate up from --rate until --slo breaks; report the highest sustainable rate")
		fs.StringVar(&f.slo, "slo", "p99=50ms,errors=0.1%", "find-max: the bounds a step must stay within")
		fs.DurationVar(&f.fm.StepDuration, "step-duration", loadgen.DefaultFindMaxStep, "find-max: how long each step runs")
	}
	fs.StringVar(&f.protocol, "protocol", "", "http/protobuf, http/json or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	fs.IntVar(&c.Connections, "connections", 0, fmt.Sprintf("grpc: connections shared by the workers, each worker one stream at a time (default: one per %d workers)", loadgen.DefaultStreamsPerConn))
	fs.StringVar(&f.encoding, "encoding", "", "body encoding: proto or json")
	_ = fs.MarkDeprecated("encoding", "use --protocol http/protobuf or http/json")
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header `K=V` (repeatable; over $OTEL_EXPORTER_OTLP_HEADERS)")
	fs.DurationVar(&c.Timeout, "timeout", 0, fmt.Sprintf("per-request timeout (default $OTEL_EXPORTER_OTLP_TIMEOUT ms, else %v)", loadgen.DefaultTimeout))
	fs.StringVar(&f.mix, "mix", "logs=1,metrics=1,traces=1", "signal weights")
	fs.IntVar(&c.Payload.Records, "records", otlpgen.DefaultRecords, "records per request (log records, data points, spans)")
	fs.IntVar(&c.Payload.Attrs, "attrs", otlpgen.DefaultAttrs, "extra attributes per record")
	fs.IntVar(&c.Payload.AttrCardinality, "attr-cardinality", otlpgen.DefaultAttrCardinality, "distinct values per extra attribute")
	bytesize.IntVar(fs, &c.Payload.BodyBytes, "body-bytes", otlpgen.DefaultBodyBytes, "typical log body size (512, 4KiB; lengths spread log-normally around it; 0: template text only)")
	fs.IntVar(&c.Payload.SpansPerTrace, "spans-per-trace", otlpgen.DefaultSpansPerTrace, "spans per trace tree")
	fs.IntVar(&c.Payload.TraceServices, "trace-services", otlpgen.DefaultTraceServices, "services a trace crosses (CLIENT/SERVER pairs between them)")
	fs.Float64Var(&c.Payload.ErrorRate, "error-rate", otlpgen.DefaultErrorRate, "share of traces with a failed span (status error)")
	fs.Float64Var(&c.Payload.LogTraceShare, "log-trace-share", otlpgen.DefaultLogTraceShare, "share of log records that carry the context of a trace the run sent")
	fs.IntVar(&c.Payload.Services, "services", otlpgen.DefaultServices, "distinct service.name values")
	fs.IntVar(&c.Payload.Instances, "instances", otlpgen.DefaultInstances, "instances per service (service.instance.id, host.name, k8s.pod.name)")
	fs.StringVar(&f.temporality, "temporality", "cumulative", "sums and histograms: cumulative (counters grow from a fixed start) or delta")
	fs.Uint64Var(&c.Payload.Seed, "seed", 1, "payload PRNG seed (same seed, same payload content; trace ids still differ per run)")
	fs.StringVar(&f.runID, "run-id", "", "16 hex digits starting every trace id (default random, so no two runs share a trace id)")
	fs.BoolVar(&c.ReplayIDs, "replay-ids", false, "send the pool's trace and span ids as encoded, repeating every pool cycle")
	fs.IntVar(&c.Payload.PoolSize, "pool-size", otlpgen.DefaultPoolSize, "pre-encoded payloads per signal")
	fs.StringVar(&f.compression, "compression", "", "body compression: none, gzip or zstd (default $OTEL_EXPORTER_OTLP_COMPRESSION, else none)")
	fs.StringVar((*string)(&c.Times), "times", "", "record times: live (moved to each send's clock) or replay (the pool's, repeating each pool cycle); default live for protobuf, else replay")
	fs.IntVar(&c.Concurrency, "concurrency", 0, fmt.Sprintf("closed model: workers (default %d); open model: most requests in flight (default %d)",
		loadgen.DefaultConcurrency, loadgen.DefaultOpenConcurrency))
	fs.Float64Var(&c.Rate, "rate", 0, "open model: total requests per second at constant arrival (0: closed model); with --find-max the first step's")
	fs.StringVar(&f.stages, "stages", "", "open model: rate ramps `D:R,...`, e.g. 30s:1000,2m:5000,30s:0 (each ramps linearly to R over D)")
	fs.DurationVar(&c.LateThreshold, "late-threshold", loadgen.DefaultLateThreshold, "open model: a send later than this behind schedule counts as late")
	fs.DurationVar(&c.Duration, "duration", 0, fmt.Sprintf("stop after this long (default %v unless --requests is given)", loadgen.DefaultDuration))
	fs.Int64Var(&c.Requests, "requests", 0, "stop after this many requests")
	fs.IntVar(&c.Retry, "retry", 0, "retries of a 429/502/503/504, honouring Retry-After (0: none, and they count as failures)")
	fs.DurationVar(&c.RetryMaxWait, "retry-max-wait", loadgen.DefaultRetryMaxWait, "longest wait before a retry")
	fs.StringVar(&f.jsonFile, "json", "", "also write the JSON report (schema "+loadgen.Schema+") to `FILE` (- for stdout, replacing the table)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no live progress (it is off anyway when stderr is not a terminal)")
	fs.Float64Var(&f.minSuccess, "min-success", loadgen.DefaultMinSuccess, "exit 1 when fewer than this fraction of requests succeed (0..1)")
	fs.Float64Var(&f.maxErrorRate, "max-error-rate", 1, "exit 1 when more than this fraction of attempts fail (0..1)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the generator to `FILE`")
	_ = fs.MarkHidden("cpuprofile")
	fs.StringVar((*string)(&c.Sender), "sender", "", "HTTP client: epoll, h1 or net-http (default: the fastest that fits)")
	_ = fs.MarkHidden("sender")
	fs.StringVar((*string)(&c.GRPCClient), "grpc-client", "", "gRPC client: lean (plain text only) or grpc-go (default: lean for plain text, grpc-go for TLS)")
	_ = fs.MarkHidden("grpc-client")
}

// config parses the string flags into the loadgen.Config, then fills what the flags left
// unset from the exporter environment; its errors are usage errors.
func (f *loadFlags) config(stderr io.Writer) (loadgen.Config, error) {
	c := f.cfg
	var err error
	if c.Mix, err = loadgen.ParseMix(f.mix); err != nil {
		return c, exitcode.Usagef("--mix: %v", err)
	}
	if c.Header, err = loadgen.ParseHeaders(f.headers); err != nil {
		return c, exitcode.Usagef("--header: %v", err)
	}
	c.Protocol = loadgen.Protocol(f.protocol)
	switch f.encoding {
	case "":
	case "json":
		c.Protocol = loadgen.ProtocolHTTPJSON
	case "proto":
		c.Protocol = loadgen.ProtocolHTTPProtobuf
	default:
		return c, exitcode.Usagef("--encoding %q: want proto or json", f.encoding)
	}
	c.Payload.Compression = otlpgen.Compression(f.compression)
	c.Payload.Temporality = otlpgen.Temporality(f.temporality)
	if f.runID != "" {
		if c.RunID, err = strconv.ParseUint(f.runID, 16, 64); err != nil || c.RunID == 0 {
			return c, exitcode.Usagef("--run-id %q: want 16 hex digits, not all zero", f.runID)
		}
	}
	if f.stages != "" {
		if c.Stages, err = loadgen.ParseStages(f.stages); err != nil {
			return c, exitcode.Usagef("--stages: %v", err)
		}
	}
	if f.findMax {
		if f.fm.SLO, err = loadgen.ParseSLO(f.slo); err != nil {
			return c, exitcode.Usagef("--slo: %v", err)
		}
		if len(c.Stages) > 0 {
			return c, exitcode.Usagef("--find-max sets the rate itself: drop --stages")
		}
		f.fm.Start = c.Rate
	}
	for name, v := range map[string]float64{"--max-error-rate": f.maxErrorRate, "--min-success": f.minSuccess} {
		if v < 0 || v > 1 {
			return c, exitcode.Usagef("%s %v: want a fraction 0..1", name, v)
		}
	}
	if f.env {
		if err := c.ApplyEnv(os.Getenv); err != nil {
			return c, exitcode.UsageError(err)
		}
	}
	if err := c.Validate(); err != nil {
		return c, exitcode.UsageError(err)
	}
	if !f.noProgress && isTerminal(stderr) {
		c.Progress = stderr
	}
	return c, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// writeReport prints the table to stdout and the JSON to --json.
func (f *loadFlags) writeReport(cmd *cobra.Command, rep *loadgen.Report) error {
	out := cmd.OutOrStdout()
	if f.jsonFile == "-" {
		return rep.WriteJSON(out)
	}
	if err := rep.WriteText(out); err != nil {
		return err
	}
	if f.jsonFile == "" {
		return nil
	}
	return writeJSONFile(f.jsonFile, rep)
}

// run runs the load (or the find-max search), writes the report and decides the exit code.
func (f *loadFlags) run(ctx context.Context, cmd *cobra.Command, cfg loadgen.Config) (*loadgen.Report, error) {
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	// An explicit GOMAXPROCS wins; otherwise the run takes the threads it uses well.
	if n := cfg.Procs(); n > 0 && n < runtime.GOMAXPROCS(0) && os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	}
	var rep *loadgen.Report
	var err error
	if f.findMax {
		if f.shard.set() {
			return nil, exitcode.UsageError(errors.New("--find-max runs on one machine: it cannot be combined with --shard, --shards or --start-at"))
		}
		rep, err = loadgen.FindMax(ctx, cfg, f.fm)
	} else {
		rep, err = f.shard.runLoad(ctx, cfg)
	}
	if errors.Is(err, loadgen.ErrInvalidConfig) || errors.Is(err, otlpgen.ErrInvalidConfig) {
		return nil, exitcode.UsageError(err)
	}
	if err != nil {
		return nil, err
	}
	if err := f.writeReport(cmd, rep); err != nil {
		return rep, err
	}
	if f.findMax {
		if rep.FindMax.MaxSustainable == 0 {
			return rep, exitcode.New(exitcode.Failure, fmt.Errorf("%w: no step met the SLO, not even the first", loadgen.ErrRunFailed))
		}
		return rep, nil
	}
	if err := rep.Check(f.minSuccess); err != nil {
		return rep, exitcode.New(exitcode.Failure, err)
	}
	if err := rep.CheckErrorRate(f.maxErrorRate); err != nil {
		return rep, exitcode.New(exitcode.Failure, err)
	}
	return rep, nil
}

func newLoadCmd() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load an OTLP/HTTP or OTLP/gRPC endpoint with traffic shaped like production",
		Long: `load sends pre-encoded OTLP export requests to an OTLP/HTTP endpoint (or,
with --protocol grpc, an OTLP/gRPC one) and accounts for every one: status
classes (gRPC codes too, with their HTTP equivalents), transport errors,
records acknowledged (minus partial_success rejections), bytes, and HDR
latency percentiles.

The traffic looks like a fleet of services: every trace has ids never sent
before (a random run id plus a counter; --seed fixes the content only), starts
at a SERVER span and crosses --trace-services services; counters grow from a
fixed start at every send; logs come from templates and point at traces the
run sent. Each send patches its copy of a pre-encoded body, so nothing is
marshalled on the hot path. Compressed bodies are compressed at every send
(20-30x the CPU of an uncompressed send of 100 logs); --times replay
--replay-ids sends the pool's pre-compressed bodies as they are instead.

The closed model (default) runs --concurrency workers back to back. The open
model (--rate R, or --stages ramps) sends at a scheduled arrival rate and
measures latency from the intended send time, so server stalls are not hidden
(coordinated omission). --find-max steps the rate up until --slo breaks.

The endpoint and its settings follow the OpenTelemetry exporter variables
(OTEL_EXPORTER_OTLP_ENDPOINT, _<SIGNAL>_ENDPOINT, _HEADERS, _COMPRESSION,
_TIMEOUT, _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY, _INSECURE,
_PROTOCOL); flags win over them.

Exit status: 0 ok; 1 when an attempt got a 4xx other than 429 (gRPC: a code
other than UNAVAILABLE, RESOURCE_EXHAUSTED with RetryInfo and the other
retryable ones) or no answer at all, when fewer than --min-success of the requests succeeded (503 and 429
count unless --retry got them through), or when --max-error-rate is exceeded;
the failures are listed by cause with the likely fix; 2 on usage errors.`,
		Example: `  otelbench load --endpoint http://127.0.0.1:4318 --duration 30s
  otelbench load --rate 2000 --mix logs=3,traces=1 --records 50 --json run.json
  otelbench load --stages 30s:1000,2m:5000,30s:0
  otelbench load --find-max --rate 500 --slo p99=50ms,errors=0.1%
  OTEL_EXPORTER_OTLP_ENDPOINT=https://collector:4318 otelbench load --ca-file ca.pem
  otelbench load --protocol grpc --insecure --endpoint 127.0.0.1:4317 --concurrency 64 --connections 4`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if os.Getenv("GOGC") == "" {
				// The generator's live heap is its payload pool, a few MB,
				// so the default GOGC collects very often: 400 gave 15-20%
				// more records per CPU-second over gRPC at 100 records a
				// request (scripts/bench-grpc.sh's client phase).
				debug.SetGCPercent(400)
			}
			_, err = f.run(cmd.Context(), cmd, cfg)
			return err
		},
	}
	f.bind(cmd.Flags(), true)
	f.shard.bind(cmd.Flags())
	return cmd
}
