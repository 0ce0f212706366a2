package ingestsrv

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
)

// Defaults of GRPCConfig's zero values.
const (
	// DefaultGRPCAddr is the OTLP/gRPC port of the specification, on
	// loopback. The serve command's --grpc-addr defaults to it; a zero
	// GRPCConfig.Addr serves no gRPC.
	DefaultGRPCAddr = "127.0.0.1:4317"
	// DefaultGRPCMaxStreams bounds concurrent streams (requests) on one
	// connection, the usual HTTP/2 value. A stream holds its message until
	// it is answered, so this and Config.MaxConns bound the messages being
	// received; the in-flight budget bounds those being stored.
	DefaultGRPCMaxStreams = 100
	// DefaultGRPCMaxRequests bounds the gRPC requests served at once over
	// all connections; more get UNAVAILABLE with RetryInfo at once. The
	// group commit takes whatever is queued, so 256 in flight keep it busy
	// (scripts/bench-grpc.sh runs 256 workers), while under 10x overload
	// (4,096 streams, open model, 2 shared cores) 1,024 in flight queued for
	// seconds: 5,270 calls timed out unanswered against 744 with 256.
	DefaultGRPCMaxRequests = 256
)

// grpcStreamWorkers is the pool of goroutines gRPC runs streams on (more
// streams get a goroutine each). A stream waits for its group commit, so the
// pool covers the in-flight requests of a loaded server; reused goroutines
// keep their grown stacks: at 256 concurrent 1-record requests
// (scripts/bench-grpc.sh's logs1) stack growth fell from 7.5% to 1.5% of
// serve's CPU profile, and gRPC's stream handling from 26% to 15%.
const grpcStreamWorkers = 256

// gRPC keepalive: a client may ping at most every grpcMinPingInterval (more
// often gets GOAWAY "too_many_pings", as gRPC's enforcement policy does),
// idle connections are closed after idleTimeout like HTTP keep-alives, and
// a peer silent for grpcPingTime + grpcPingTimeout is dropped.
const (
	grpcMinPingInterval = 10 * time.Second
	grpcPingTime        = time.Minute
	grpcPingTimeout     = 20 * time.Second
)

// GRPCConfig configures the OTLP/gRPC listener of the Server.
type GRPCConfig struct {
	// Addr is where ListenAndServe serves OTLP/gRPC; "" serves none.
	Addr string
	// MaxRecv is the largest message in bytes, before and after
	// decompression (0 means Config.MaxBody, by default 4 MiB: gRPC's and
	// the Collector's default); larger ones get RESOURCE_EXHAUSTED.
	MaxRecv int64
	// MaxStreams bounds concurrent streams per connection (0 means
	// DefaultGRPCMaxStreams).
	MaxStreams uint32
	// MaxRequests bounds the gRPC requests being served at once, over all
	// connections (0 means DefaultGRPCMaxRequests); more are answered
	// UNAVAILABLE with RetryInfo at once instead of waiting in the
	// group-commit queue.
	MaxRequests int

	// minPingInterval is the keepalive enforcement's shortest permitted
	// client ping interval (0 means grpcMinPingInterval); tests shorten it
	// to see the policy act within a second.
	minPingInterval time.Duration
}

// validate checks c against the server's defaulted config.
func (c GRPCConfig) validate(srv Config) error {
	if c.MaxRecv < 0 || c.MaxRequests < 0 {
		return errors.New("ingestsrv: config: negative gRPC limit")
	}
	if c.MaxRecv > math.MaxInt32 {
		return fmt.Errorf("ingestsrv: config: gRPC message limit %d over gRPC's 2 GiB", c.MaxRecv)
	}
	d, inflight := c.withDefaults(srv), srv.InflightBytes
	if inflight < d.MaxRecv*(1+otlpcodec.DecodeFactor) {
		return fmt.Errorf("ingestsrv: config: in-flight budget %d cannot hold one %d-byte gRPC message and its decoding (%d bytes)",
			inflight, d.MaxRecv, d.MaxRecv*(1+otlpcodec.DecodeFactor))
	}
	return nil
}

// withDefaults fills zero fields from the server's defaulted srv.
func (c GRPCConfig) withDefaults(srv Config) GRPCConfig {
	if c.MaxRecv == 0 {
		c.MaxRecv = min(srv.MaxBody, math.MaxInt32)
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultGRPCMaxStreams
	}
	if c.minPingInterval == 0 {
		c.minPingInterval = grpcMinPingInterval
	}
	return c
}
