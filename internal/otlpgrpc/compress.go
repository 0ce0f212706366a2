package otlpgrpc

import (
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // registers "gzip"
)

// Compressor names, as sent in the grpc-encoding header. They are the
// Collector's (configcompression): gzip, zstd and snappy.
const (
	CompressorGzip   = "gzip"
	CompressorZstd   = "zstd"
	CompressorSnappy = "snappy"
)

// zstdMaxWindow caps the window a zstd frame may ask for, as over HTTP
// (otlpcodec): every sane encoder stays below it, and a frame asking for
// more is refused before anything is allocated. gRPC bounds the output at
// the server's receive limit.
const zstdMaxWindow = 8 << 20

// gRPC keeps its compressors in a process-wide registry that must be filled
// at init time (encoding.RegisterCompressor); gzip registers itself the same
// way when imported.
func init() {
	encoding.RegisterCompressor(&zstdCompressor{})
	encoding.RegisterCompressor(snappyCompressor{})
}

type zstdCompressor struct {
	encoders sync.Pool // *zstd.Encoder
	decoders sync.Pool // *zstd.Decoder
}

func (*zstdCompressor) Name() string { return CompressorZstd }

func (c *zstdCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	if e, ok := c.encoders.Get().(*zstd.Encoder); ok {
		e.Reset(w)
		return &zstdWriter{Encoder: e, pool: &c.encoders}, nil
	}
	e, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, err
	}
	return &zstdWriter{Encoder: e, pool: &c.encoders}, nil
}

// zstdWriter returns its encoder to the pool once closed.
type zstdWriter struct {
	*zstd.Encoder
	pool *sync.Pool
}

func (w *zstdWriter) Close() error {
	err := w.Encoder.Close()
	w.pool.Put(w.Encoder)
	return err
}

func (c *zstdCompressor) Decompress(r io.Reader) (io.Reader, error) {
	d, ok := c.decoders.Get().(*zstd.Decoder)
	if ok {
		if err := d.Reset(r); err != nil {
			return nil, err
		}
	} else {
		var err error
		// Concurrency 1 decodes synchronously in the reader's goroutine:
		// no goroutines left behind by a decoder that is never closed.
		d, err = zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderMaxMemory(zstdMaxWindow*2))
		if err != nil {
			return nil, err
		}
	}
	return &zstdReader{d: d, pool: &c.decoders}, nil
}

// zstdReader returns its decoder to the pool at the end of the stream. A
// stream not read to its end (gRPC stops at its size limit) drops it.
type zstdReader struct {
	d    *zstd.Decoder
	pool *sync.Pool
}

func (r *zstdReader) Read(p []byte) (int, error) {
	if r.d == nil {
		return 0, io.EOF
	}
	n, err := r.d.Read(p)
	if err == io.EOF {
		_ = r.d.Reset(nil)
		r.pool.Put(r.d)
		r.d = nil
	}
	return n, err
}

type snappyCompressor struct{}

func (snappyCompressor) Name() string { return CompressorSnappy }

func (snappyCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	return snappy.NewBufferedWriter(w), nil
}

func (snappyCompressor) Decompress(r io.Reader) (io.Reader, error) {
	return snappy.NewReader(r), nil
}
