package otlpgen

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compressor compresses patched bodies at send time, reusing its state between calls. It is
// not safe for concurrent use: one per worker.
type Compressor struct {
	c    Compression
	buf  bytes.Buffer
	zbuf []byte
	gz   *gzip.Writer
	zstd *zstd.Encoder
}

// NewCompressor returns a Compressor for c; Close releases it.
func NewCompressor(c Compression) (*Compressor, error) {
	z := &Compressor{c: c}
	switch c {
	case "", CompressionNone:
	case CompressionGzip:
		z.gz = gzip.NewWriter(&z.buf)
	case CompressionZstd:
		// One goroutine-free encoder per worker: EncodeAll with concurrency 1 does the work on
		// the caller's goroutine.
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		z.zstd = enc
	default:
		return nil, fmt.Errorf("%w: compression %q", ErrInvalidConfig, c)
	}
	return z, nil
}

// Compress returns b compressed, in storage the Compressor reuses at the next call (with no
// compression, b itself).
func (z *Compressor) Compress(b []byte) ([]byte, error) {
	switch {
	case z.gz != nil:
		z.buf.Reset()
		z.gz.Reset(&z.buf)
		if _, err := z.gz.Write(b); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := z.gz.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return z.buf.Bytes(), nil
	case z.zstd != nil:
		z.zbuf = z.zstd.EncodeAll(b, z.zbuf[:0])
		return z.zbuf, nil
	}
	return b, nil
}

// Close releases the encoder.
func (z *Compressor) Close() {
	if z.zstd != nil {
		_ = z.zstd.Close()
	}
}
