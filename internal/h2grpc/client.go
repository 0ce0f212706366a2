// Package h2grpc is a lean gRPC client for unary calls over plain-text
// HTTP/2 (h2c), made for load generation: the per-call cost of grpc-go's
// client (a stream object, goroutine hand-offs between the caller, its
// writer and its reader, per-call allocations, one write per call) is what
// limits `otelbench load --protocol grpc`'s records per CPU-second
// (scripts/bench-grpc.sh, client phase).
//
// A Client is one logical connection to one server that redials when its
// connection fails or the server sends GOAWAY. A caller owns a Call, made
// once and reused call after call: its frames go out from the caller's
// goroutine, coalesced with those of concurrent callers into one write
// (whoever finds the connection idle writes everything queued), and one
// reader goroutine per connection parses the answers and wakes the callers
// whose calls ended. Bodies are copied into the write buffer, so a body may
// be reused as soon as Invoke returns.
//
// What it speaks: the connection preface and SETTINGS (the server's
// MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE and INITIAL_WINDOW_SIZE are
// respected), HEADERS from a header block encoded once per method, DATA
// with the 5-byte gRPC message prefix, connection and stream flow control
// both ways, PING, GOAWAY (calls above the last stream id end without an
// answer), RST_STREAM, and the answer's headers and trailers (grpc-status,
// grpc-message, grpc-status-details-bin). Not spoken: TLS, streaming
// calls, server push. Use grpc-go for those.
package h2grpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/encoding"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxRecvMsgSize = 4 << 20 // grpc-go's default receive limit
)

// Errors. A call that fails with an error got no gRPC answer; its status
// is in the Call otherwise.
var (
	// ErrNoAnswer wraps every error of Invoke: the server did not answer
	// the call (connection refused or lost, stream refused or reset before
	// any header, GOAWAY before the call was taken, timeout).
	ErrNoAnswer = errors.New("no answer from the server")
	// ErrClosed is the error of calls on a closed Client.
	ErrClosed = errors.New("h2grpc: client closed")
)

// Method is one unary method a Client calls.
type Method struct {
	Path     string      // "/package.Service/Method"
	Metadata [][2]string // request metadata: lower-case name, value
}

// Config configures a Client.
type Config struct {
	Addr    string   // host:port, plain text
	Methods []Method // what Call.Invoke's method index refers to
	// Compressor, when set, compresses every request with the compressor
	// grpc-go's encoding registry holds under that name (grpc-encoding).
	Compressor string
	UserAgent  string
	// Timeout bounds dialing and each write to the connection.
	Timeout time.Duration
	// MaxRecvMsgSize bounds an answer's message (RESOURCE_EXHAUSTED above).
	MaxRecvMsgSize int
}

// Client calls unary methods over one HTTP/2 connection at a time.
type Client struct {
	cfg Config
	// fields are each method's request headers (hpack.go); static their
	// never-indexed blocks; indexable whether all fit HPACK's table at once.
	fields    [][]hpack.HeaderField
	static    [][]byte
	indexable bool
	comp      encoding.Compressor

	cur    atomic.Pointer[transport]
	dialMu sync.Mutex // one dial at a time

	mu     sync.Mutex // guards all and closed
	all    map[*transport]struct{}
	closed bool
	wg     sync.WaitGroup // the transports' readers
}

// NewClient returns a Client; it dials on the first call.
func NewClient(cfg Config) (*Client, error) {
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxRecvMsgSize = cmp.Or(cfg.MaxRecvMsgSize, DefaultMaxRecvMsgSize)
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("h2grpc address %q: %w", cfg.Addr, err)
	}
	c := &Client{cfg: cfg, all: map[*transport]struct{}{}}
	if cfg.Compressor != "" {
		if c.comp = encoding.GetCompressor(cfg.Compressor); c.comp == nil {
			return nil, fmt.Errorf("h2grpc: no compressor %q registered with grpc's encoding package", cfg.Compressor)
		}
	}
	for _, m := range cfg.Methods {
		f := methodFields(cfg, m)
		c.fields = append(c.fields, f)
		c.static = append(c.static, staticBlock(f))
	}
	c.indexable = tableSize(c.fields) <= hpackTableSize
	return c, nil
}

// transport returns the connection to open the next stream on, dialing a
// new one when there is none or the current one is failed or draining.
func (c *Client) transport(ctx context.Context) (*transport, error) {
	if t := c.cur.Load(); t != nil && t.usable.Load() {
		return t, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	if t := c.cur.Load(); t != nil && t.usable.Load() {
		return t, nil
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	t, err := dial(ctx, c)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		t.close()
		return nil, ErrClosed
	}
	c.all[t] = struct{}{}
	c.wg.Go(func() {
		t.readLoop()
		c.mu.Lock()
		delete(c.all, t)
		c.mu.Unlock()
	})
	c.cur.Store(t)
	return t, nil
}

// Close closes every connection, failing the calls in flight, and waits
// for the readers to end.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	for t := range c.all {
		t.close()
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// compressorFor returns the compressor of an answer's grpc-encoding.
func (c *Client) compressorFor(name string) encoding.Compressor {
	if c.comp != nil && name == c.cfg.Compressor {
		return c.comp
	}
	return encoding.GetCompressor(name)
}
