package otlpgen

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// Encoding is the wire encoding of a payload.
type Encoding string

// Encodings accepted by OTLP/HTTP.
const (
	EncodingProto Encoding = "proto" // application/x-protobuf
	EncodingJSON  Encoding = "json"  // application/json, OTLP-JSON rules
)

// ContentType returns the HTTP Content-Type for the encoding.
func (e Encoding) ContentType() string {
	if e == EncodingJSON {
		return "application/json"
	}
	return "application/x-protobuf"
}

// Compression is the Content-Encoding of a payload.
type Compression string

// Compressions accepted by OTLP/HTTP servers.
const (
	CompressionNone Compression = "none"
	CompressionGzip Compression = "gzip"
	CompressionZstd Compression = "zstd"
)

// Defaults for zero Config fields.
const (
	DefaultRecords         = 100
	DefaultAttrs           = 4
	DefaultAttrCardinality = 100
	DefaultBodyBytes       = 128
	DefaultSpansPerTrace   = 10
	DefaultServices        = 5
	DefaultInstances       = 2
	DefaultTraceServices   = 3
	DefaultErrorRate       = 0.01
	DefaultLogTraceShare   = 0.25
	DefaultTemporality     = TemporalityCumulative
	DefaultPoolSize        = 16
	DefaultEncoding        = EncodingProto
	DefaultCompression     = CompressionNone
)

// Limits that keep a pool within memory a load generator can afford.
const (
	MaxRecords   = 100_000
	MaxAttrs     = 1_000
	MaxBodyBytes = 1 << 20
	MaxPoolSize  = 4_096
	// MaxSpansPerTrace keeps a span's index within its trace in the 16 bits Patch derives
	// span ids from.
	MaxSpansPerTrace = 10_000
)

// Temporality is the aggregation temporality of sums and histograms.
type Temporality string

// Temporalities. Cumulative is what SDKs send by default; delta what some backends
// (and SDKs configured for them) prefer.
const (
	TemporalityCumulative Temporality = "cumulative"
	TemporalityDelta      Temporality = "delta"
)

// Config shapes generated payloads. Zero fields take the Default* values,
// except Seed (0 is a valid seed) and BaseTime (zero means time.Now()).
type Config struct {
	Records         int         // records per request (log records, data points or spans)
	Attrs           int         // attributes per record
	AttrCardinality int         // distinct values per attribute key
	BodyBytes       int         // log body size in bytes
	SpansPerTrace   int         // spans per trace tree (the last tree may be smaller)
	Services        int         // distinct service.name values
	Instances       int         // instances per service: distinct service.instance.id, host and pod
	TraceServices   int         // services one trace crosses (CLIENT/SERVER pairs between them)
	ErrorRate       float64     // share of traces with a failed span (status error, HTTP 500 upstream)
	LogTraceShare   float64     // share of log records that carry a trace context
	Temporality     Temporality // of sums and histograms: cumulative or delta
	Seed            uint64      // seeds the PRNG: same seed, same payloads
	BaseTime        time.Time   // timestamps are laid out from here; zero means now
	PoolSize        int         // pre-encoded payloads per signal
	Encoding        Encoding    // proto or json
	Compression     Compression // none, gzip or zstd
}

// ErrInvalidConfig marks every Config.Validate error.
var ErrInvalidConfig = errors.New("invalid payload config")

// withDefaults returns c with zero fields replaced by defaults.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Records, DefaultRecords)
	def(&c.AttrCardinality, DefaultAttrCardinality)
	def(&c.SpansPerTrace, DefaultSpansPerTrace)
	def(&c.Services, DefaultServices)
	def(&c.Instances, DefaultInstances)
	def(&c.TraceServices, DefaultTraceServices)
	c.Temporality = cmp.Or(c.Temporality, DefaultTemporality)
	def(&c.PoolSize, DefaultPoolSize)
	c.Encoding = cmp.Or(c.Encoding, DefaultEncoding)
	c.Compression = cmp.Or(c.Compression, DefaultCompression)
	if c.BaseTime.IsZero() {
		c.BaseTime = time.Now()
	}
	return c
}

// Validate reports the first out-of-range field. Attrs and BodyBytes may be
// zero (no attributes, empty bodies); the others must be positive or zero
// (default).
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	switch {
	case c.Records < 0 || c.Records > MaxRecords:
		return bad("records %d out of range 1..%d", c.Records, MaxRecords)
	case c.Attrs < 0 || c.Attrs > MaxAttrs:
		return bad("attrs %d out of range 0..%d", c.Attrs, MaxAttrs)
	case c.AttrCardinality < 0:
		return bad("attr cardinality %d must be positive", c.AttrCardinality)
	case c.BodyBytes < 0 || c.BodyBytes > MaxBodyBytes:
		return bad("body bytes %d out of range 0..%d", c.BodyBytes, MaxBodyBytes)
	case c.SpansPerTrace < 0 || c.SpansPerTrace > MaxSpansPerTrace:
		return bad("spans per trace %d out of range 1..%d", c.SpansPerTrace, MaxSpansPerTrace)
	case c.Services < 0:
		return bad("services %d must be positive", c.Services)
	case c.Instances < 0:
		return bad("instances %d must be positive", c.Instances)
	case c.TraceServices < 0:
		return bad("trace services %d must be positive", c.TraceServices)
	case c.ErrorRate < 0 || c.ErrorRate > 1:
		return bad("error rate %v out of range 0..1", c.ErrorRate)
	case c.LogTraceShare < 0 || c.LogTraceShare > 1:
		return bad("log trace share %v out of range 0..1", c.LogTraceShare)
	case c.PoolSize < 0 || c.PoolSize > MaxPoolSize:
		return bad("pool size %d out of range 1..%d", c.PoolSize, MaxPoolSize)
	}
	switch c.Encoding {
	case "", EncodingProto, EncodingJSON:
	default:
		return bad("encoding %q (want proto or json)", c.Encoding)
	}
	switch c.Compression {
	case "", CompressionNone, CompressionGzip, CompressionZstd:
	default:
		return bad("compression %q (want none, gzip or zstd)", c.Compression)
	}
	switch c.Temporality {
	case "", TemporalityCumulative, TemporalityDelta:
	default:
		return bad("temporality %q (want cumulative or delta)", c.Temporality)
	}
	return nil
}
