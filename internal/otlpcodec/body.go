package otlpcodec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// zstdMaxWindow caps the window a zstd frame may ask for. Encoders choose a
// window no larger than the content (klauspost and the reference encoder's
// default levels use at most 8 MiB), so 8 MiB accepts every sane client while
// a frame demanding a 2 GiB window is refused before anything is allocated.
const zstdMaxWindow = 8 << 20

// initialGuess sizes the buffer when the length is unknown.
const initialGuess = 32 << 10

var (
	gzipReaders sync.Pool // *gzip.Reader
	zstdReaders sync.Pool // *zstd.Decoder
)

// ReadBody reads r, compressed with c, and returns the decompressed bytes,
// appended to dst[:0] (dst may come from a pool; pass nil otherwise). sizeHint
// is the compressed length if known (Content-Length), else -1. grow, if not
// nil, is called before every growth of the output buffer with the capacity
// it adds (the caller accounts for cap(dst) itself); an error from it aborts
// the read and is returned as is (the server charges a memory budget this
// way and answers 503 when it is spent). The buffer grows as bytes arrive,
// never ahead of them on the strength of sizeHint alone.
//
// It fails with ErrTooLarge as soon as more than limit bytes are read from r
// or produced by decompression, so it never holds more than limit bytes of
// body, whatever the compression ratio. Corrupt compressed data fails with an
// error wrapping ErrCorrupt; errors reading r are returned wrapped.
func ReadBody(dst []byte, r io.Reader, c Compression, limit, sizeHint int64, grow func(int64) error) ([]byte, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("read body: limit %d must be positive", limit)
	}
	if sizeHint > limit {
		return nil, fmt.Errorf("%w: %d bytes > limit %d", ErrTooLarge, sizeHint, limit)
	}
	src := &limitedReader{r: r, n: limit}
	switch c {
	case CompressionNone:
		return readLimited(dst, src, limit, sizeHint, grow)
	case CompressionGzip:
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(src)
		} else {
			err = zr.Reset(src)
		}
		if err != nil {
			return nil, decompressErr("gzip", src, err)
		}
		out, err := readLimited(dst, zr, limit, guess(sizeHint), grow)
		zr.Reset(bytes.NewReader(nil)) //nolint:errcheck // drop the reference to src; an empty reader fails harmlessly
		gzipReaders.Put(zr)
		if err != nil {
			return nil, decompressErr("gzip", src, err)
		}
		return out, nil
	case CompressionZstd:
		zr, _ := zstdReaders.Get().(*zstd.Decoder)
		if zr == nil {
			var err error
			// Concurrency 1 decodes synchronously: no goroutines to own.
			zr, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(zstdMaxWindow))
			if err != nil {
				return nil, fmt.Errorf("new zstd decoder: %w", err)
			}
		}
		if err := zr.Reset(src); err != nil {
			zstdReaders.Put(zr)
			return nil, decompressErr("zstd", src, err)
		}
		out, err := readLimited(dst, zr, limit, guess(sizeHint), grow)
		_ = zr.Reset(nil)
		zstdReaders.Put(zr)
		if err != nil {
			return nil, decompressErr("zstd", src, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedEncoding, c)
}

// guess sizes the output buffer of a decompression from the compressed size.
func guess(compressed int64) int64 {
	if compressed <= 0 {
		return -1
	}
	return 4 * compressed
}

// decompressErr classifies an error met while decompressing: the limit and
// network errors pass through, everything else is corrupt input.
func decompressErr(format string, src *limitedReader, err error) error {
	var ge growError
	if errors.As(err, &ge) {
		return ge.err
	}
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	if src.err != nil { // the transport failed, not the data
		return fmt.Errorf("read body: %w", src.err)
	}
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, format, err)
}

// readLimited appends all of r to dst[:0], failing with ErrTooLarge once more
// than limit bytes arrive. The buffer grows as bytes arrive, doubling from
// initialGuess up to sizeHint+1 (the +1 sees EOF without growing), then on
// to limit+1; grow is called with each growth's added capacity (the caller
// has charged cap(dst) already). A declared length is a claim, not bytes:
// sizing the buffer from it let twelve clients each declaring 4 MiB and
// sending a byte every half second hold the whole in-flight budget, and
// every other client got 503.
func readLimited(dst []byte, r io.Reader, limit, sizeHint int64, grow func(int64) error) ([]byte, error) {
	b := dst[:0]
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limit {
				return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
			}
			next := max(2*int64(cap(b)), initialGuess)
			if sizeHint >= 0 && int64(cap(b)) <= sizeHint {
				next = min(next, sizeHint+1)
			}
			next = min(next, limit+1)
			if err := charge(grow, next-int64(cap(b))); err != nil {
				return nil, err
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// growError marks an error of the grow callback so that decompressErr passes
// it through unclassified.
type growError struct{ err error }

func (g growError) Error() string { return g.err.Error() }
func (g growError) Unwrap() error { return g.err }

func charge(grow func(int64) error, n int64) error {
	if grow == nil {
		return nil
	}
	if err := grow(n); err != nil {
		return growError{err}
	}
	return nil
}

// limitedReader reads at most n bytes from r and fails with ErrTooLarge when
// r holds more. It records transport errors so they are not mistaken for
// corrupt data.
type limitedReader struct {
	r   io.Reader
	n   int64 // bytes still allowed
	err error // first non-EOF error of r
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, fmt.Errorf("%w: compressed body over limit", ErrTooLarge)
	}
	// Read one byte past the limit to tell "exactly n" from "more than n".
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, fmt.Errorf("%w: compressed body over limit", ErrTooLarge)
	}
	if err != nil && err != io.EOF && l.err == nil {
		l.err = err
	}
	return n, err
}

// Compress returns data compressed with c, appended to dst[:0]. It is the
// client side of ReadBody (the load generator and tests use it).
func Compress(dst, data []byte, c Compression) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst[:0], data...), nil
	case CompressionGzip:
		buf := bytes.NewBuffer(dst[:0])
		zw, _ := gzip.NewWriterLevel(buf, gzip.BestSpeed)
		if _, err := zw.Write(data); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return buf.Bytes(), nil
	case CompressionZstd:
		return zstdEncoder().EncodeAll(data, dst[:0]), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedEncoding, c)
}

// zstdEncoder is shared: EncodeAll is safe for concurrent use, and with
// concurrency 1 the encoder starts no goroutines.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder with constant options: %v", err)) // unreachable: options are constants
	}
	return enc
})
