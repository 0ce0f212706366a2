package h2grpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/http2"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// stream is a call's state on its connection. The fields below open are
// the answer, written by the reader under the transport's lock while the
// stream is in its table, and read by the caller once done fired.
type stream struct {
	id      uint32
	done    chan struct{} // one signal per stream's end
	open    bool          // in the transport's table
	sendWin int64

	headers    bool // a header block arrived: the server answered
	pendingEnd bool // the block being decoded ends the stream
	httpStatus int
	grpcType   bool // content-type application/grpc*
	hasCode    bool
	code       uint32
	message    string // grpc-message, percent-encoded
	details    string // grpc-status-details-bin, base64
	encoding   string // grpc-encoding of the answer
	msg        []byte // the answer's DATA: prefix and message
	tooLarge   bool
	recvUsed   int
	wasReset   bool // by the server's RST_STREAM, with code rst
	rst        http2.ErrCode
	err        error // the stream or connection failed
}

func (s *stream) reset() {
	*s = stream{done: s.done, msg: s.msg[:0]}
}

// Call is one caller's unary call, reused call after call (not
// concurrently): Invoke, then Code, Reply and Status describe the answer
// until the next Invoke.
type Call struct {
	c     *Client
	s     stream
	zbuf  bytes.Buffer // the compressed request
	code  codes.Code
	msg   string // decoded grpc-message, or what went wrong locally
	reply []byte
}

// NewCall returns a Call on c.
func (c *Client) NewCall() *Call {
	return &Call{c: c, s: stream{done: make(chan struct{}, 1)}}
}

// Invoke calls method (an index into Config.Methods) with the serialized
// request body and waits for the answer or the end of ctx. A nil error
// means the server answered: see Code. An error (wrapping ErrNoAnswer)
// means it did not.
func (cl *Call) Invoke(ctx context.Context, method int, body []byte) error {
	cl.code, cl.msg, cl.reply = codes.OK, "", nil
	prefix := [5]byte{}
	if cl.c.comp != nil {
		if err := cl.compress(body); err != nil {
			return fmt.Errorf("%w: compress: %v", ErrNoAnswer, err)
		}
		body, prefix[0] = cl.zbuf.Bytes(), 1
	}
	prefix[1], prefix[2], prefix[3], prefix[4] = byte(len(body)>>24), byte(len(body)>>16), byte(len(body)>>8), byte(len(body))
	// A connection found draining is replaced, and a stream its GOAWAY
	// refused was never processed (RFC 9113 §6.8): try again on a new
	// connection, as grpc-go does transparently.
	for try := 0; ; try++ {
		t, err := cl.c.transport(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoAnswer, err)
		}
		cl.s.reset()
		if err = t.open(ctx, &cl.s, method, &prefix, body); err == nil {
			err = cl.wait(ctx, t)
		}
		if errors.Is(err, errGoAway) && try < 3 && ctx.Err() == nil {
			continue
		}
		if err != nil && !errors.Is(err, ErrNoAnswer) {
			err = fmt.Errorf("%w: %w", ErrNoAnswer, err)
		}
		return err
	}
}

func (cl *Call) compress(body []byte) error {
	cl.zbuf.Reset()
	w, err := cl.c.comp.Compress(&cl.zbuf)
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	return w.Close()
}

// wait waits for the stream's end, or cancels it when ctx ends first, and
// reads the answer.
func (cl *Call) wait(ctx context.Context, t *transport) error {
	s := &cl.s
	select {
	case <-s.done:
	case <-ctx.Done():
		t.mu.Lock()
		if s.open {
			s.err = ctx.Err()
			t.resetLocked(s, http2.ErrCodeCancel)
		}
		t.mu.Unlock()
		<-s.done
	}
	if s.err != nil && !s.headers {
		return fmt.Errorf("%w: %w", ErrNoAnswer, s.err)
	}
	cl.code, cl.msg = s.status()
	if cl.code == codes.OK {
		cl.reply, cl.code, cl.msg = cl.message()
	}
	return nil
}

// status returns the answer's gRPC status: its grpc-status, or what a
// stream that ended without one means (grpc-go's mapping: an HTTP status,
// a reset, a lost connection).
func (s *stream) status() (codes.Code, string) {
	switch {
	case s.tooLarge:
		return codes.ResourceExhausted, "received message larger than the limit"
	case s.hasCode:
		return codes.Code(s.code), decodeMessage(s.message)
	case errors.Is(s.err, context.DeadlineExceeded):
		return codes.DeadlineExceeded, s.err.Error()
	case errors.Is(s.err, context.Canceled):
		return codes.Canceled, s.err.Error()
	case s.wasReset:
		return rstCode(s.rst), s.err.Error()
	case s.err != nil:
		return codes.Unavailable, s.err.Error()
	case s.httpStatus != 200:
		return httpCode(s.httpStatus), fmt.Sprintf("unexpected HTTP status %d", s.httpStatus)
	case !s.grpcType:
		return codes.Unknown, "answer without a gRPC content-type"
	}
	return codes.Internal, "answer without grpc-status"
}

// message returns the reply of an OK answer (exactly one message).
func (cl *Call) message() ([]byte, codes.Code, string) {
	m := cl.s.msg
	if len(m) < 5 || int(uint32(m[1])<<24|uint32(m[2])<<16|uint32(m[3])<<8|uint32(m[4])) != len(m)-5 {
		return nil, codes.Internal, fmt.Sprintf("answer is not one gRPC message (%d bytes)", len(m))
	}
	if m[0] == 0 {
		return m[5:], codes.OK, ""
	}
	comp := cl.c.compressorFor(cl.s.encoding)
	if comp == nil {
		return nil, codes.Internal, fmt.Sprintf("answer compressed with unknown grpc-encoding %q", cl.s.encoding)
	}
	r, err := comp.Decompress(bytes.NewReader(m[5:]))
	if err != nil {
		return nil, codes.Internal, fmt.Sprintf("decompress answer: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(cl.c.cfg.MaxRecvMsgSize)+1))
	switch {
	case err != nil:
		return nil, codes.Internal, fmt.Sprintf("decompress answer: %v", err)
	case len(out) > cl.c.cfg.MaxRecvMsgSize:
		return nil, codes.ResourceExhausted, "received message larger than the limit after decompression"
	}
	return out, codes.OK, ""
}

// Code returns the gRPC status code of the last answer.
func (cl *Call) Code() codes.Code { return cl.code }

// Reply returns the last OK answer's message, valid until the next Invoke.
func (cl *Call) Reply() []byte { return cl.reply }

// Status returns the last answer's status with its details
// (grpc-status-details-bin, where RetryInfo travels). It allocates: call
// it for answers that are not OK.
func (cl *Call) Status() *status.Status {
	if cl.code != codes.OK && cl.s.hasCode && cl.s.details != "" {
		if b, err := decodeBinHeader(cl.s.details); err == nil {
			p := &spb.Status{}
			if proto.Unmarshal(b, p) == nil && codes.Code(p.GetCode()) == cl.code {
				return status.FromProto(p)
			}
		}
	}
	return status.New(cl.code, cl.msg)
}

// decodeBinHeader decodes a -bin metadata value, padded or not (gRPC over
// HTTP/2, "Custom-Metadata").
func decodeBinHeader(v string) ([]byte, error) {
	if len(v)%4 == 0 {
		return base64.StdEncoding.DecodeString(v)
	}
	return base64.RawStdEncoding.DecodeString(v)
}

// decodeMessage undoes grpc-message's percent-encoding.
func decodeMessage(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]) {
			b.WriteByte(unhex(v[i+1])<<4 | unhex(v[i+2]))
			i += 2
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// httpCode maps the HTTP status of an answer without grpc-status to a
// gRPC code, as grpc-go does (gRPC's http-grpc-status-mapping.md).
func httpCode(s int) codes.Code {
	switch s {
	case 400:
		return codes.Internal
	case 401:
		return codes.Unauthenticated
	case 403:
		return codes.PermissionDenied
	case 404:
		return codes.Unimplemented
	case 429, 502, 503, 504:
		return codes.Unavailable
	}
	return codes.Unknown
}

// rstCode maps the RST_STREAM code of a stream reset after its headers to
// a gRPC code, as grpc-go does.
func rstCode(c http2.ErrCode) codes.Code {
	switch c {
	case http2.ErrCodeRefusedStream:
		return codes.Unavailable
	case http2.ErrCodeCancel:
		return codes.Canceled
	case http2.ErrCodeFlowControl, http2.ErrCodeEnhanceYourCalm:
		return codes.ResourceExhausted
	case http2.ErrCodeInadequateSecurity:
		return codes.PermissionDenied
	}
	return codes.Internal
}
