package ingestsrv

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/store"
)

// Defaults for Config's zero values.
const (
	// DefaultAddr is loopback only: exposing the server is a deliberate act.
	DefaultAddr = "127.0.0.1:4318"
	// DefaultDataDir holds the SQLite database.
	DefaultDataDir = "./otelbench-data"
	// DefaultMaxBody caps a request body before and after decompression.
	// OpenTelemetry SDK exporters send batches of 512 records, far below it.
	DefaultMaxBody int64 = 4 << 20
	// DefaultInflightBytes is the memory budget of requests in flight:
	// body buffers plus an allowance for decoding (otlpcodec.DecodeCost).
	DefaultInflightBytes int64 = 48 << 20
	// DefaultShutdownTimeout bounds the drain on shutdown.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultMaxConns bounds open client connections served by net/http;
	// more get a canned 503 (see DefaultMaxRejecting). Each served
	// connection costs a goroutine and its buffers (about 20-40 KiB busy):
	// 1,024 of them stay near 40 MiB, while 4,096 measured 235 MB peak RSS
	// under 10x overload.
	DefaultMaxConns = 1024
	// DefaultMaxRejecting bounds the connections past MaxConns being
	// answered 503 at a time; past it a connection is closed at once. A
	// rejecter waiting for its request is a parked goroutine (a few KiB);
	// one answering also holds a 2 KiB buffer, for at most about 2 s. Under
	// 10x overload (4,096 clients on 2 cores) clients are late to send
	// their request after connecting, and 1,024 rejecters were not enough.
	DefaultMaxRejecting = 4096
	// DefaultMaxConnsPerSource bounds the connections one source address
	// may hold among MaxConns (a quarter of DefaultMaxConns): 1,100 slow
	// connections from one client, just past MaxConns, otherwise shut out
	// every other client for seconds at a time.
	DefaultMaxConnsPerSource = DefaultMaxConns / 4
	// DefaultMinBodyRate is the slowest a request body may arrive, in
	// bytes a second on average after its first bodyRateGrace: 4 KiB/s is
	// 32 kbit/s, far below any link an exporter runs on, yet cuts off a
	// client trickling a declared 4 MiB within seconds instead of the 60 s
	// read timeout.
	DefaultMinBodyRate int64 = 4 << 10
	// DefaultMaxRecords caps the records (log records, data points, spans)
	// of one request, rejected ones included, as the Collector caps sizes:
	// 64 bytes a record on average at DefaultMaxBody, while SDK exporters
	// send 512 and the Collector's batch processor 8,192. Projection costs
	// per record: a 4 MB request of 2 million empty log records took the
	// projector to 737 MB.
	DefaultMaxRecords = 1 << 16
	// DefaultRetryAfter is the Retry-After of 503 answers, in seconds.
	DefaultRetryAfter = 1
	// DefaultTracesFile is serve's and bench's --traces-file: a new data
	// directory keeps spans in traces.db with a projector of their own, for
	// a faster catch-up after a mixed load (store.Config.TracesFile says by
	// how much). A bool's zero value cannot default to true, so
	// Config.TracesFile's zero value stays one file.
	DefaultTracesFile = true
)

// Config configures New. Zero values fall back to the Default* constants.
type Config struct {
	// Config configures the store the server opens in its Dir, the data
	// directory ("" means DefaultDataDir): its durability (Sync), queue,
	// retention, disk bound and projection (store.Config). Its zero values
	// are the store's defaults and store.Config.Validate checks it; its
	// Logger (nil means slog.Default()) is the server's too. TracesFile:
	// serve and bench default to DefaultTracesFile; the zero value keeps one
	// file, as the store's does (what embedders such as pipeline's
	// in-process sink get).
	store.Config
	// Addr is the listen address of ListenAndServe ("" means DefaultAddr).
	Addr string
	// MaxBody caps a request body before and after decompression (0 means
	// DefaultMaxBody); larger bodies get 413.
	MaxBody int64
	// InflightBytes is the memory budget of requests being read, decoded or
	// committed (0 means DefaultInflightBytes); beyond it requests get 503.
	InflightBytes int64
	// MaxConns bounds open connections served by net/http (0 means
	// DefaultMaxConns); a connection beyond it gets 503 + Retry-After +
	// Connection: close from a small rejecter, without reaching net/http.
	MaxConns int
	// MaxRejecting bounds connections being answered that way at a time (0
	// means DefaultMaxRejecting); beyond it they are closed unanswered.
	MaxRejecting int
	// MaxConnsPerSource bounds the connections served for one source IP
	// address (0 means DefaultMaxConnsPerSource, or MaxConns if lower);
	// more are answered like connections past MaxConns, counted under the
	// rejection reason "conn_source_limit".
	MaxConnsPerSource int
	// MaxRecords caps the records of one request, rejected ones included
	// (0 means DefaultMaxRecords, negative means no cap); more get 413.
	MaxRecords int
	// MinBodyRate is the slowest average rate, in bytes a second, at which
	// a request body may arrive once its first few seconds have passed (0
	// means DefaultMinBodyRate, negative means no minimum); a slower body
	// is cut off with 408 and the connection closed.
	MinBodyRate int64
	// MaxLagRecords, if positive, answers 503 + Retry-After while projection
	// trails the raw store by more than this many records: a bound on the
	// backlog (and on the store memory that grows with it, see
	// docs/benchmarks/serve.md) at the price of coupling ingest to
	// projection under sustained overload. 0 means no bound. It also sets
	// the store's ProjectLagRecords, when unset, to half of it: projection
	// stops deferring well before ingest would get 503s.
	MaxLagRecords int64
	// Pprof mounts net/http/pprof under /debug/pprof/ (behind auth).
	Pprof bool
	// AuthToken, if set, requires "Authorization: Bearer <token>" on every
	// route but /healthz and (unless AuthIngest) the OTLP routes. Mounted
	// routes (dashboard, query API) and /api/v1/stats also take the session
	// cookie a browser gets by logging in at LoginPath.
	AuthToken string
	// AuthIngest extends AuthToken to the OTLP routes.
	AuthIngest bool
	// ShutdownTimeout bounds the drain after the context ends (0 means
	// DefaultShutdownTimeout); in-flight requests still running after it
	// are cut off, the store is closed regardless.
	ShutdownTimeout time.Duration
	// GRPC configures OTLP/gRPC beside OTLP/HTTP (grpc_config.go); its
	// zero value serves none.
	GRPC GRPCConfig
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.MaxBody < 0 || c.InflightBytes < 0 || c.ShutdownTimeout < 0 || c.MaxConns < 0 || c.MaxRejecting < 0 || c.MaxConnsPerSource < 0 || c.MaxLagRecords < 0 {
		return errors.New("ingestsrv: config: negative limit")
	}
	if strings.TrimSpace(c.AuthToken) != c.AuthToken {
		return errors.New("ingestsrv: config: the auth token starts or ends with white space, which no client sends " +
			"(a trailing newline from a secret file?); remove it")
	}
	if c.AuthIngest && c.AuthToken == "" {
		return errors.New("ingestsrv: config: AuthIngest needs AuthToken")
	}
	d := c.withDefaults()
	if err := d.Config.Validate(); err != nil {
		return err // already says "store: config: ..."
	}
	if d.InflightBytes < d.MaxBody*(1+otlpcodec.DecodeFactor) {
		return fmt.Errorf("ingestsrv: config: in-flight budget %d cannot hold one %d-byte body and its decoding (%d bytes)",
			d.InflightBytes, d.MaxBody, d.MaxBody*(1+otlpcodec.DecodeFactor))
	}
	// After the body limit: gRPC's defaults to it.
	return c.GRPC.validate(d)
}

func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, DefaultAddr)
	c.Dir = cmp.Or(c.Dir, DefaultDataDir)
	c.MaxBody = cmp.Or(c.MaxBody, DefaultMaxBody)
	c.InflightBytes = cmp.Or(c.InflightBytes, DefaultInflightBytes)
	c.MaxConns = cmp.Or(c.MaxConns, DefaultMaxConns)
	c.MaxRejecting = cmp.Or(c.MaxRejecting, DefaultMaxRejecting)
	c.MaxConnsPerSource = cmp.Or(c.MaxConnsPerSource, min(DefaultMaxConnsPerSource, c.MaxConns))
	c.MaxRecords = cmp.Or(c.MaxRecords, DefaultMaxRecords)
	c.MinBodyRate = cmp.Or(c.MinBodyRate, DefaultMinBodyRate)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, DefaultShutdownTimeout)
	if c.MaxLagRecords > 0 && c.ProjectLagRecords == 0 {
		// Stop deferring well before ingest would get 503s.
		c.ProjectLagRecords = c.MaxLagRecords / 2
	}
	c.Config = c.Config.WithDefaults()
	return c
}
