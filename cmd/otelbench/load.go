package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/otelbench/otelbench/internal/exitcode"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// loadFlags holds the flags of `load` (and of `bench`, which passes them on).
type loadFlags struct {
	cfg          loadgen.Config
	mix          string
	headers      []string
	encoding     string
	compression  string
	jsonFile     string
	noProgress   bool
	maxErrorRate float64
	cpuProfile   string
	protocol     string
	fs           *pflag.FlagSet // to tell flags given from defaults
}

// protocolEnv is the OpenTelemetry SDK's variable for the OTLP transport;
// --protocol overrides it.
const protocolEnv = "OTEL_EXPORTER_OTLP_PROTOCOL"

func (f *loadFlags) bind(fs *pflag.FlagSet, defaultEndpoint bool) {
	c := &f.cfg
	f.fs = fs
	if defaultEndpoint {
		fs.StringVar(&c.Endpoint, "endpoint", loadgen.DefaultEndpoint, "OTLP/HTTP base URL (paths /v1/logs, /v1/metrics, /v1/traces)")
	}
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header `K=V` (repeatable)")
	fs.DurationVar(&c.Timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout")
	fs.StringVar(&f.mix, "mix", "logs=1,metrics=1,traces=1", "signal weights")
	fs.IntVar(&c.Payload.Records, "records", otlpgen.DefaultRecords, "records per request (log records, data points, spans)")
	fs.IntVar(&c.Payload.Attrs, "attrs", otlpgen.DefaultAttrs, "attributes per record")
	fs.IntVar(&c.Payload.AttrCardinality, "attr-cardinality", otlpgen.DefaultAttrCardinality, "distinct values per attribute")
	fs.IntVar(&c.Payload.BodyBytes, "body-bytes", otlpgen.DefaultBodyBytes, "log body size in bytes")
	fs.IntVar(&c.Payload.SpansPerTrace, "spans-per-trace", otlpgen.DefaultSpansPerTrace, "spans per trace tree")
	fs.IntVar(&c.Payload.Services, "services", otlpgen.DefaultServices, "distinct service resources")
	fs.Uint64Var(&c.Payload.Seed, "seed", 1, "payload PRNG seed (same seed, same payloads)")
	fs.IntVar(&c.Payload.PoolSize, "pool-size", otlpgen.DefaultPoolSize, "pre-encoded payloads per signal")
	fs.StringVar(&f.encoding, "encoding", "proto", "body encoding: proto or json (OTLP-JSON)")
	fs.StringVar(&f.compression, "compression", "none", "body compression: none, gzip or zstd")
	fs.StringVar((*string)(&c.Times), "times", "", "record times: live (moved to each send's clock) or replay (the pool's, repeating each pool cycle); default live for proto bodies without compression, else replay")
	fs.IntVar(&c.Concurrency, "concurrency", 0, fmt.Sprintf("closed model: workers (default %d); open model: most requests in flight (default %d)",
		loadgen.DefaultConcurrency, loadgen.DefaultOpenConcurrency))
	fs.Float64Var(&c.Rate, "rate", 0, "open model: total requests per second at constant arrival (0: closed model)")
	fs.DurationVar(&c.LateThreshold, "late-threshold", loadgen.DefaultLateThreshold, "open model: a send later than this behind schedule counts as late")
	fs.DurationVar(&c.Duration, "duration", 0, fmt.Sprintf("stop after this long (default %v unless --requests is given)", loadgen.DefaultDuration))
	fs.Int64Var(&c.Requests, "requests", 0, "stop after this many requests")
	fs.IntVar(&c.Retry, "retry", 0, "retries of a 429/502/503/504, honouring Retry-After (0: none)")
	fs.DurationVar(&c.RetryMaxWait, "retry-max-wait", loadgen.DefaultRetryMaxWait, "longest wait before a retry")
	fs.StringVar(&f.jsonFile, "json", "", "also write the JSON report (schema otelbench.load/v1) to `FILE` (- for stdout, replacing the table)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no live progress (it is off anyway when stderr is not a terminal)")
	fs.Float64Var(&f.maxErrorRate, "max-error-rate", 1, "exit 1 when more than this fraction of requests fail (0..1)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the generator to `FILE`")
	_ = fs.MarkHidden("cpuprofile")
	fs.StringVar(&f.protocol, "protocol", "", "OTLP transport: http/protobuf, http/json or grpc (default $"+protocolEnv+", else http/protobuf); grpc takes --endpoint host:port (default "+loadgen.DefaultGRPCEndpoint+")")
	fs.IntVar(&c.Connections, "connections", 0, fmt.Sprintf("grpc: connections shared by the workers, each worker one stream at a time (default: one per %d workers)", loadgen.DefaultStreamsPerConn))
	fs.StringVar((*string)(&c.Sender), "sender", "", "HTTP client: epoll, h1 or net-http (default: the fastest that fits)")
	_ = fs.MarkHidden("sender")
}

// config parses the string flags into the loadgen.Config; its errors are
// usage errors.
func (f *loadFlags) config(stderr io.Writer) (loadgen.Config, error) {
	c := f.cfg
	var err error
	if c.Mix, err = loadgen.ParseMix(f.mix); err != nil {
		return c, exitcode.Usagef("--mix: %v", err)
	}
	if c.Header, err = loadgen.ParseHeaders(f.headers); err != nil {
		return c, exitcode.Usagef("--header: %v", err)
	}
	c.Payload.Encoding = otlpgen.Encoding(f.encoding)
	f.applyProtocol(&c)
	c.Payload.Compression = otlpgen.Compression(f.compression)
	if f.maxErrorRate < 0 || f.maxErrorRate > 1 {
		return c, exitcode.Usagef("--max-error-rate %v: want a fraction 0..1", f.maxErrorRate)
	}
	if err := c.Validate(); err != nil {
		return c, exitcode.UsageError(err)
	}
	if !f.noProgress && isTerminal(stderr) {
		c.Progress = stderr
	}
	return c, nil
}

// applyProtocol sets c.Protocol from --protocol or $OTEL_EXPORTER_OTLP_PROTOCOL,
// and what follows from it when not given: grpc's endpoint, http/json's
// encoding.
func (f *loadFlags) applyProtocol(c *loadgen.Config) {
	p := f.protocol
	if !f.fs.Changed("protocol") {
		p = os.Getenv(protocolEnv)
	}
	c.Protocol = loadgen.Protocol(p)
	switch c.Protocol {
	case loadgen.ProtocolGRPC:
		if ep := f.fs.Lookup("endpoint"); ep != nil && !ep.Changed {
			c.Endpoint = "" // loadgen.DefaultGRPCEndpoint
		}
	case loadgen.ProtocolHTTPJSON:
		if !f.fs.Changed("encoding") {
			c.Payload.Encoding = otlpgen.EncodingJSON
		}
	}
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

// run runs the load, writes the report and applies --max-error-rate.
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
	rep, err := loadgen.Run(ctx, cfg)
	if errors.Is(err, loadgen.ErrInvalidConfig) || errors.Is(err, otlpgen.ErrInvalidConfig) {
		return nil, exitcode.UsageError(err)
	}
	if err != nil {
		return nil, err
	}
	if err := f.writeReport(cmd, rep); err != nil {
		return rep, err
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
		Short: "Load an OTLP/HTTP or OTLP/gRPC endpoint with a mix of logs, metrics and traces",
		Long: `load sends pre-encoded OTLP export requests to an OTLP/HTTP endpoint (or,
with --protocol grpc, an OTLP/gRPC one) and accounts for every one: status
classes (gRPC codes too, with their HTTP equivalents), transport errors,
records acknowledged (minus partial_success rejections), bytes, and HDR
latency percentiles.

The closed model (default) runs --concurrency workers back to back. The open
model (--rate R) sends at a constant arrival rate and measures latency from
the intended send time, so server stalls are not hidden (coordinated
omission); the uncorrected latency and the late sends are reported too.

Exit status: 0 ok, 1 when --max-error-rate is exceeded (or no request got a
response), 2 on usage errors.`,
		Example: `  otelbench load --endpoint http://127.0.0.1:4318 --duration 30s
  otelbench load --rate 2000 --mix logs=3,traces=1 --records 50 --json run.json
  otelbench load --requests 10000 --encoding json --compression zstd --header Authorization="Bearer x"
  otelbench load --protocol grpc --endpoint 127.0.0.1:4317 --concurrency 64 --connections 4`,
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
	return cmd
}
