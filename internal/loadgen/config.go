package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// Defaults for zero Config fields.
const (
	DefaultEndpoint        = "http://127.0.0.1:4318"
	DefaultConcurrency     = 8   // closed model workers
	DefaultOpenConcurrency = 256 // open model: most requests in flight at once
	DefaultDuration        = 10 * time.Second
	DefaultTimeout         = 10 * time.Second
	DefaultLateThreshold   = time.Millisecond
	DefaultRetryMaxWait    = 5 * time.Second
	DefaultMaxResponse     = 64 << 10 // bytes of a response body read for partial_success
	MaxMixWeight           = 1000
)

// Mix holds the relative weight of each signal, indexed by signal.Signal.Index;
// a zero weight leaves the signal out.
type Mix [signal.Count]int

// DefaultMix sends logs, metrics and traces in equal parts.
var DefaultMix = Mix{1, 1, 1}

// ParseMix parses "logs=1,metrics=2,traces=1". Signals not named get weight 0.
func ParseMix(s string) (Mix, error) {
	var m Mix
	for part := range strings.SplitSeq(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return m, fmt.Errorf("mix entry %q: want signal=weight", part)
		}
		sig, err := signal.Parse(strings.TrimSpace(name))
		if err != nil {
			return m, fmt.Errorf("mix entry %q: %w", part, err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 0 || n > MaxMixWeight {
			return m, fmt.Errorf("mix entry %q: weight must be an integer 0..%d", part, MaxMixWeight)
		}
		m[sig.Index()] = n
	}
	return m, m.validate()
}

// String formats the mix as ParseMix reads it.
func (m Mix) String() string {
	parts := make([]string, 0, len(m))
	for _, sig := range signal.All() {
		parts = append(parts, fmt.Sprintf("%s=%d", sig, m[sig.Index()]))
	}
	return strings.Join(parts, ",")
}

func (m Mix) validate() error {
	total := 0
	for _, w := range m {
		if w < 0 || w > MaxMixWeight {
			return fmt.Errorf("mix weight %d out of range 0..%d", w, MaxMixWeight)
		}
		total += w
	}
	if total == 0 {
		return errors.New("mix has no signal with a positive weight")
	}
	return nil
}

// Signals returns the signals with a positive weight.
func (m Mix) Signals() []signal.Signal {
	var out []signal.Signal
	for _, sig := range signal.All() {
		if m[sig.Index()] > 0 {
			out = append(out, sig)
		}
	}
	return out
}

// schedule returns one cycle of signals in which each appears as often as
// its weight, interleaved by smooth weighted round robin (nginx), so that
// request n has signal schedule[n%len] and short runs already follow the mix.
func (m Mix) schedule() []signal.Signal {
	total := 0
	for _, w := range m {
		total += w
	}
	out := make([]signal.Signal, 0, total)
	var current Mix
	for range total {
		best := -1
		for i := range m {
			current[i] += m[i]
			if m[i] > 0 && (best < 0 || current[i] > current[best]) {
				best = i
			}
		}
		current[best] -= total
		out = append(out, signal.All()[best])
	}
	return out
}

// Sender names an HTTP client implementation.
type Sender string

// Senders. SenderAuto uses SenderEpoll for the plain-HTTP closed model without
// retries on Linux, SenderH1 (plain or TLS) otherwise, and SenderNetHTTP when
// the signals go to different hosts (runner.pickSender).
const (
	SenderAuto    Sender = ""
	SenderEpoll   Sender = "epoll"    // closed model: epoll loops over non-blocking sockets (evloop_linux.go)
	SenderH1      Sender = "h1"       // a goroutine per connection, lean HTTP/1.1 (h1.go)
	SenderNetHTTP Sender = "net-http" // Go's net/http with a tuned Transport (sender.go)
)

// Times selects the record times a run sends (Config.Times).
type Times string

const (
	// TimesAuto is TimesLive for protobuf bodies (compressed ones after patching), else TimesReplay.
	TimesAuto Times = ""
	// TimesLive moves each request's times to the clock at its send (otlpgen's Payload.Patch),
	// as a live agent's advance. OTLP-JSON bodies cannot be stamped.
	TimesLive Times = "live"
	// TimesReplay sends the pool's times as encoded, so they repeat every pool cycle.
	TimesReplay Times = "replay"
)

// Config describes one load run. Zero fields take the Default* values.
//
// A run is split into shards (several processes or machines sharing one load) through Rate,
// Concurrency, Stages and Payload.Seed: see Split.
type Config struct {
	// Endpoint is the base URL (or host:port, see Insecure); the signal paths /v1/logs,
	// /v1/metrics and /v1/traces are appended. With ProtocolGRPC it is the server's
	// host:port (scheme-less: TLS unless Insecure), http://host:port or https://host:port.
	Endpoint string
	// SignalEndpoints, where set, is the full URL of a signal's requests, used as given
	// (OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT).
	SignalEndpoints [signal.Count]string
	// Insecure makes a scheme-less endpoint http://; otherwise it is https://, as the
	// exporters read OTEL_EXPORTER_OTLP_INSECURE.
	Insecure bool
	// Protocol is the OTLP transport and encoding: http/protobuf (default), http/json or
	// grpc (grpc.go). It sets Payload.Encoding.
	Protocol Protocol
	// TLS configures https:// endpoints.
	TLS TLSConfig

	Header http.Header // extra request headers (e.g. Authorization), over SignalHeaders
	// SignalHeaders are each signal's headers from the environment (ApplyEnv).
	SignalHeaders [signal.Count]http.Header
	// Timeout bounds one request, connection included. The senders enforce
	// it with a little slack to stay cheap: the epoll loop checks every
	// 10 ms, the h1 and gRPC senders move their deadline only when less
	// than Timeout is left (a request gets between Timeout and 1.5×Timeout).
	Timeout time.Duration
	Mix     Mix // zero value means DefaultMix
	Payload otlpgen.Config

	// Concurrency is the number of workers: in the closed model each sends
	// back to back; in the open model it bounds the requests in flight.
	Concurrency int
	// Rate > 0 selects the open model: total requests per second, constant arrival.
	Rate float64
	// LateThreshold: an open-model send later than its intended time by more
	// than this counts as a late send.
	LateThreshold time.Duration

	// Duration and Requests stop the run, whichever comes first. Both zero
	// means DefaultDuration.
	Duration time.Duration
	Requests int64

	// Retry is the most retries of a request answered 429, 502, 503 or 504
	// (0: none, the default, since retries hide backpressure). The wait is
	// the response's Retry-After, at most RetryMaxWait.
	Retry        int
	RetryMaxWait time.Duration

	// Sender picks the HTTP client; "" (SenderAuto) is right for nearly
	// everyone and the others exist for comparison and debugging.
	Sender Sender

	// Times says what times the records carry: "" (TimesAuto) live where the
	// bodies allow it (protobuf), TimesLive always (an error for OTLP-JSON),
	// TimesReplay the pool's as encoded, the same every --pool-size requests.
	Times Times

	// RunID is the first half of every trace id the run sends (otlpgen.TraceID); 0 means a
	// random one, so that runs, and shards of one run, never send the same trace id.
	RunID uint64
	// ReplayIDs sends the pool's trace and span ids as encoded, the same every pool cycle.
	ReplayIDs bool

	// Stages, when set, make the open model's rate follow a schedule of linear ramps
	// (ParseStages); the run lasts their total duration.
	Stages []Stage

	// Connections is how many gRPC connections the workers share (0: one
	// per DefaultStreamsPerConn workers); protocol grpc only.
	Connections int
	// GRPCClient picks the gRPC client; "" (GRPCClientAuto) is the lean one
	// for plain text and grpc-go for TLS. Protocol grpc only.
	GRPCClient GRPCClient

	// Progress, when not nil, receives a live progress display (mpb).
	Progress io.Writer

	// Clock paces the open model; nil means the real clock.
	Clock Clock

	// StartAt, when not zero, is the wall-clock time (on Clock) at which to
	// start sending: Run builds its payloads first, then waits for it, so
	// that shards on several machines start together (RunShard). Run
	// returns an error when ctx ends during the wait.
	StartAt time.Time

	// firstSend, when not nil, records when the first request left (RunShard).
	firstSend *firstSend
}

// ErrInvalidConfig marks every Config.Validate error.
var ErrInvalidConfig = errors.New("invalid load config")

// Validate reports the first invalid field.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	if err := c.Protocol.validate(); err != nil {
		return bad("%v", err)
	}
	if c.isGRPC() {
		if err := c.validateGRPC(); err != nil {
			return bad("%v", err)
		}
	} else {
		if c.Connections != 0 {
			return bad("connections applies to protocol grpc only (HTTP/1.1 uses one connection per worker)")
		}
		if c.GRPCClient != GRPCClientAuto {
			return bad("grpc client applies to protocol grpc only")
		}
		for _, sig := range signal.All() {
			if _, err := c.signalURL(sig); err != nil {
				return bad("%v", err)
			}
		}
	}
	if c.Protocol != "" && c.Payload.Encoding != "" && c.Payload.Encoding != c.Protocol.encoding() {
		return bad("protocol %s and encoding %s disagree", c.Protocol, c.Payload.Encoding)
	}
	if err := validateStages(c.Stages); err != nil {
		return bad("%v", err)
	}
	if c.Mix != (Mix{}) {
		if err := c.Mix.validate(); err != nil {
			return bad("%v", err)
		}
	}
	if err := c.Payload.Validate(); err != nil {
		return bad("%w", err) // wraps otlpgen.ErrInvalidConfig too
	}
	switch {
	case c.Timeout < 0:
		return bad("timeout %v is negative", c.Timeout)
	case c.Concurrency < 0 || c.Concurrency > 10_000:
		return bad("concurrency %d out of range 1..10000", c.Concurrency)
	case c.Rate < 0 || c.Rate > 10_000_000:
		return bad("rate %v out of range (0, 1e7] requests/s", c.Rate)
	case c.Duration < 0:
		return bad("duration %v is negative", c.Duration)
	case c.Requests < 0:
		return bad("requests %d is negative", c.Requests)
	case c.Retry < 0 || c.Retry > 100:
		return bad("retry %d out of range 0..100", c.Retry)
	case c.RetryMaxWait < 0:
		return bad("retry max wait %v is negative", c.RetryMaxWait)
	case c.LateThreshold < 0:
		return bad("late threshold %v is negative", c.LateThreshold)
	}
	if err := c.validateModes(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// validateModes checks the times mode and the sender against the rest of the config.
func (c Config) validateModes() error {
	switch c.Times {
	case TimesAuto, TimesReplay:
	case TimesLive:
		if c.encoding() == otlpgen.EncodingJSON {
			return fmt.Errorf("times live needs protobuf bodies (they are patched in place at each send); use times replay")
		}
	default:
		return fmt.Errorf("times %q (want live or replay)", c.Times)
	}
	one, https := c.oneHost()
	switch c.Sender {
	case SenderAuto, SenderNetHTTP:
	case SenderH1:
		if !one {
			return fmt.Errorf("sender h1 needs every signal on one host")
		}
	case SenderEpoll:
		if !evSupported || !one || https || c.Rate > 0 || len(c.Stages) > 0 || c.Retry > 0 {
			return fmt.Errorf("sender epoll needs Linux, an http:// endpoint, the closed model and no retries")
		}
	default:
		return fmt.Errorf("sender %q (want epoll, h1 or net-http)", c.Sender)
	}
	return nil
}

// encoding returns the payload encoding the config asks for.
func (c Config) encoding() otlpgen.Encoding {
	if c.Protocol != "" {
		return c.Protocol.encoding()
	}
	return cmp.Or(c.Payload.Encoding, otlpgen.DefaultEncoding)
}

// oneHost reports whether every signal goes to one scheme and host (one connection serves
// them all), and whether that scheme is https.
func (c Config) oneHost() (one, https bool) {
	var first *url.URL
	for _, sig := range signal.All() {
		s, err := c.signalURL(sig)
		if err != nil {
			return false, false
		}
		u, _ := url.Parse(s)
		if first == nil {
			first = u
		} else if u.Scheme != first.Scheme || u.Host != first.Host {
			return false, first.Scheme == "https"
		}
	}
	return true, first.Scheme == "https"
}

// withDefaults returns c with zero fields replaced by defaults.
func (c Config) withDefaults() Config {
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
		if c.isGRPC() {
			c.Endpoint = DefaultGRPCEndpoint
		}
	}
	c.Endpoint, _ = normalizeEndpoint(c.Endpoint, c.Insecure)
	c.Payload.Encoding = c.encoding()
	if c.Protocol == "" {
		c.Protocol = ProtocolHTTPProtobuf
		if c.Payload.Encoding == otlpgen.EncodingJSON {
			c.Protocol = ProtocolHTTPJSON
		}
	}
	if len(c.Stages) > 0 {
		c.Duration = stagesDuration(c.Stages)
	}
	if c.Mix == (Mix{}) {
		c.Mix = DefaultMix
	}
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
		if c.open() {
			c.Concurrency = DefaultOpenConcurrency
		}
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = DefaultDuration
	}
	c.LateThreshold = cmp.Or(c.LateThreshold, DefaultLateThreshold)
	c.RetryMaxWait = cmp.Or(c.RetryMaxWait, DefaultRetryMaxWait)
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	c.Header = c.Header.Clone()
	if c.Header == nil {
		c.Header = http.Header{}
	}
	return c
}

// open reports whether c uses the open model.
func (c Config) open() bool { return c.Rate > 0 || len(c.Stages) > 0 }

// model names the load model as the report spells it.
func (c Config) model() string {
	if c.open() {
		return "open"
	}
	return "closed"
}

// headerNames returns the sorted names of the extra headers (values may be
// secrets and stay out of reports).
func (c Config) headerNames() []string {
	names := make([]string, 0, len(c.Header))
	for k := range c.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// ParseHeaders parses repeated "Key=Value" (or "Key: Value") flags.
func ParseHeaders(kvs []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			k, v, ok = strings.Cut(kv, ":")
		}
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%w: header %q: want Key=Value", ErrInvalidConfig, kv)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// Split returns shard i (from 0) of n of c: a share of the rate, the stage targets, the
// concurrency, the gRPC connections and the request budget, and a seed of its own, so n processes started with it
// together make c's load. Run ids stay random per process, so shards never share a trace id.
func (c Config) Split(i, n int) Config {
	if n <= 1 {
		return c
	}
	s := c
	s.Rate = c.Rate / float64(n)
	s.Stages = make([]Stage, len(c.Stages))
	for k, st := range c.Stages {
		s.Stages[k] = Stage{st.Duration, st.Target / float64(n)}
	}
	if len(c.Stages) == 0 {
		s.Stages = nil
	}
	if c.Concurrency > 0 {
		s.Concurrency = max(1, c.Concurrency/n+btoi(i < c.Concurrency%n))
	}
	if c.Connections > 0 {
		s.Connections = max(1, c.Connections/n+btoi(i < c.Connections%n))
	}
	if c.Requests > 0 {
		s.Requests = c.Requests/int64(n) + int64(btoi(int64(i) < c.Requests%int64(n)))
	}
	s.Payload.Seed = c.Payload.Seed + uint64(i)
	s.RunID = 0
	return s
}
