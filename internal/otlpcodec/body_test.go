package otlpcodec

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestReadBodyRoundTrip(t *testing.T) {
	data := bytes.Repeat([]byte("otelbench "), 10_000) // 100,000 bytes
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		for _, tt := range []struct {
			name  string
			limit int64
			err   error
		}{
			{"under limit", 1 << 20, nil},
			{"exactly at limit", int64(len(data)), nil},
			{"one byte over after decompression", int64(len(data)) - 1, ErrTooLarge},
		} {
			t.Run(c.String()+"/"+tt.name, func(t *testing.T) {
				body, err := Compress(nil, data, c)
				if err != nil {
					t.Fatal(err)
				}
				for _, hint := range []int64{-1, int64(len(body))} {
					if hint > tt.limit {
						continue // the early Content-Length check is tested below
					}
					got, err := ReadBody(nil, iotest.HalfReader(bytes.NewReader(body)), c, tt.limit, hint, nil)
					if !errors.Is(err, tt.err) {
						t.Fatalf("hint %d: error = %v, want %v", hint, err, tt.err)
					}
					if err == nil && !bytes.Equal(got, data) {
						t.Fatalf("hint %d: got %d bytes, want the %d bytes compressed", hint, len(got), len(data))
					}
				}
			})
		}
	}
}

func TestReadBodyCompressedOverLimit(t *testing.T) {
	// Random-ish data does not compress: the compressed stream itself
	// exceeds the limit and must be cut before decompression completes.
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i*7919 + i>>3)
	}
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			body, _ := Compress(nil, data, c)
			limit := int64(len(body) / 2)
			if _, err := ReadBody(nil, bytes.NewReader(body), c, limit, int64(len(body)), nil); !errors.Is(err, ErrTooLarge) {
				t.Errorf("with Content-Length: error = %v, want ErrTooLarge", err)
			}
			if _, err := ReadBody(nil, bytes.NewReader(body), c, limit, -1, nil); !errors.Is(err, ErrTooLarge) {
				t.Errorf("chunked: error = %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestReadBodyCorrupt(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    Compression
		body []byte
	}{
		{"gzip header", CompressionGzip, []byte("not gzip at all")},
		{"zstd header", CompressionZstd, []byte("not zstd at all")},
		{"gzip truncated", CompressionGzip, truncated(t, CompressionGzip)},
		{"zstd truncated", CompressionZstd, truncated(t, CompressionZstd)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadBody(nil, bytes.NewReader(tt.body), tt.c, 1<<20, -1, nil)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestReadBodyTransportError(t *testing.T) {
	boom := errors.New("connection reset")
	body, _ := Compress(nil, bytes.Repeat([]byte("x"), 1<<16), CompressionGzip)
	r := io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(boom))
	_, err := ReadBody(nil, r, CompressionGzip, 1<<20, -1, nil)
	if !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Errorf("error = %v, want the transport error, not ErrCorrupt", err)
	}
}

func truncated(t *testing.T, c Compression) []byte {
	t.Helper()
	b, err := Compress(nil, bytes.Repeat([]byte("abcdefgh"), 4096), c)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)/2]
}

// TestReadBodyBomb feeds real decompression bombs (1 GiB of zeros, gzip -9:
// 1 MB; zstd: 32 KB) through a 4 MiB limit: ErrTooLarge, and the bytes
// allocated stay in the order of the limit, not of the gigabyte.
func TestReadBodyBomb(t *testing.T) {
	for _, tt := range []struct {
		file string
		c    Compression
	}{
		{"testdata/bomb-1GiB.gz", CompressionGzip},
		{"testdata/bomb-1GiB.zst", CompressionZstd},
	} {
		t.Run(tt.c.String(), func(t *testing.T) {
			bomb, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			const limit = 4 << 20
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = ReadBody(nil, bytes.NewReader(bomb), tt.c, limit, int64(len(bomb)), nil)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error = %v, want ErrTooLarge", err)
			}
			// Growth doubles up to limit+1 (about 2x limit in all) plus the
			// decoder's window and tables; 1 GiB would be 128x this bound.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*limit {
				t.Errorf("allocated %d bytes for a %d-byte limit, want at most %d", alloc, limit, 8*limit)
			}
		})
	}
}

func BenchmarkReadBody(b *testing.B) {
	data := bytes.Repeat([]byte("otelbench log line payload "), 40) // ~1 KB, a 1-record request
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		body, _ := Compress(nil, data, c)
		b.Run(c.String(), func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, err = ReadBody(buf, bytes.NewReader(body), c, 1<<20, int64(len(body)), nil)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestReadBodyGrowBudget(t *testing.T) {
	overBudget := errors.New("over budget")
	data := bytes.Repeat([]byte("y"), 1<<20)
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			body, _ := Compress(nil, data, c)
			var charged int64
			grow := func(n int64) error {
				if charged+n > 256<<10 {
					return overBudget
				}
				charged += n
				return nil
			}
			_, err := ReadBody(nil, bytes.NewReader(body), c, 4<<20, -1, grow)
			if !errors.Is(err, overBudget) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("error = %v, want the budget's error unclassified", err)
			}
			charged = 0
			got, err := ReadBody(nil, bytes.NewReader(body), c, 4<<20, -1, func(n int64) error { charged += n; return nil })
			if err != nil || len(got) != len(data) {
				t.Fatalf("got %d bytes, %v; want %d", len(got), err, len(data))
			}
			if charged < int64(cap(got)) {
				t.Errorf("charged %d bytes for a %d-byte buffer", charged, cap(got))
			}
		})
	}
}

// TestReadBodyChargesAsBytesArrive: a declared length is not charged before
// its bytes come. A body that stops after 10 of a declared 4 MiB holds one
// initial buffer; a body that arrives whole ends in a buffer of exactly its
// length (+1 to see EOF), and the charges add up to that buffer's capacity.
func TestReadBodyChargesAsBytesArrive(t *testing.T) {
	const declared = 4 << 20
	stalled := errors.New("client stalled")
	var charged int64
	grow := func(n int64) error { charged += n; return nil }
	_, err := ReadBody(nil, io.MultiReader(bytes.NewReader(make([]byte, 10)), iotest.ErrReader(stalled)),
		CompressionNone, declared, declared, grow)
	if !errors.Is(err, stalled) {
		t.Fatalf("error %v, want %v", err, stalled)
	}
	if charged > initialGuess {
		t.Errorf("charged %d bytes for 10 bytes of a declared %d, want at most %d", charged, declared, initialGuess)
	}
	for _, n := range []int{100, initialGuess, 3*initialGuess + 7, declared} {
		charged = 0
		got, err := ReadBody(nil, bytes.NewReader(make([]byte, n)), CompressionNone, declared, int64(n), grow)
		if err != nil || len(got) != n {
			t.Fatalf("got %d bytes, %v; want %d", len(got), err, n)
		}
		if cap(got) != n+1 || charged != int64(cap(got)) {
			t.Errorf("%d bytes: capacity %d, charged %d; want %d and %d", n, cap(got), charged, n+1, n+1)
		}
	}
}
