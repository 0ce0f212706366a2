package otlpgrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/otelbench/otelbench/internal/signal"
)

func TestMethod(t *testing.T) {
	tests := []struct {
		sig  signal.Signal
		want string
	}{
		{signal.Logs, "/opentelemetry.proto.collector.logs.v1.LogsService/Export"},
		{signal.Metrics, "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"},
		{signal.Traces, "/opentelemetry.proto.collector.trace.v1.TraceService/Export"},
	}
	for _, tt := range tests {
		if got := Method(tt.sig); got != tt.want {
			t.Errorf("Method(%v) = %q, want %q", tt.sig, got, tt.want)
		}
		if got, ok := SignalOf(tt.want); !ok || got != tt.sig {
			t.Errorf("SignalOf(%q) = %v, %v; want %v, true", tt.want, got, ok, tt.sig)
		}
	}
	if _, ok := SignalOf("/grpc.health.v1.Health/Check"); ok {
		t.Error("SignalOf(health check) = true, want false")
	}
}

// TestCodecReceive unmarshals one- and three-buffer messages: one buffer
// comes back without a copy, several are joined into dst.
func TestCodecReceive(t *testing.T) {
	want := []byte("0123456789abcdef")
	tests := []struct {
		name       string
		data       mem.BufferSlice
		contiguous bool
	}{
		{"one buffer", mem.BufferSlice{mem.SliceBuffer(want)}, true},
		{"three buffers", mem.BufferSlice{mem.SliceBuffer(want[:3]), mem.SliceBuffer(want[3:10]), mem.SliceBuffer(want[10:])}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			if err := (Codec{}).Unmarshal(tt.data, &m); err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			if m.Len() != len(want) || m.Contiguous() != tt.contiguous {
				t.Errorf("Len %d Contiguous %v, want %d %v", m.Len(), m.Contiguous(), len(want), tt.contiguous)
			}
			dst := make([]byte, 0, 64)
			got := m.Bytes(dst)
			if !bytes.Equal(got, want) {
				t.Errorf("Bytes = %q, want %q", got, want)
			}
			if copied := len(got) > 0 && &got[0] == &dst[:1][0]; copied == tt.contiguous {
				t.Errorf("copied into dst = %v, want %v", copied, !tt.contiguous)
			}
		})
	}
	if err := (Codec{}).Unmarshal(nil, new(int)); err == nil {
		t.Error("Unmarshal into *int: nil error, want one")
	}
}

// releasePool records what gRPC gives back.
type releasePool struct{ put []*[]byte }

func (p *releasePool) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (p *releasePool) Put(b *[]byte)     { p.put = append(p.put, b) }

// TestRecycled checks that a recycled body is handed back once gRPC frees
// it, and not before.
func TestRecycled(t *testing.T) {
	body := bytes.Repeat([]byte{7}, 4<<10) // above gRPC's pooling threshold
	pool := &releasePool{}
	out, err := (Codec{}).Marshal(Recycled(&body, pool))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Materialize(), body) {
		t.Fatal("marshalled bytes differ from the body")
	}
	if len(pool.put) != 0 {
		t.Fatalf("body given back before gRPC freed it")
	}
	out.Free()
	if len(pool.put) != 1 || &(*pool.put[0])[0] != &body[0] {
		t.Fatalf("got %d buffers back, want the body once", len(pool.put))
	}
}

// TestCompressors round-trips every registered compressor of ours.
func TestCompressors(t *testing.T) {
	data := bytes.Repeat([]byte("otlp payload "), 4096)
	for _, name := range []string{CompressorGzip, CompressorZstd, CompressorSnappy} {
		t.Run(name, func(t *testing.T) {
			c := encoding.GetCompressor(name)
			if c == nil {
				t.Fatalf("compressor %q not registered", name)
			}
			for range 2 { // the second round takes pooled coders
				var buf bytes.Buffer
				w, err := c.Compress(&buf)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if buf.Len() >= len(data) {
					t.Errorf("compressed %d bytes to %d, want fewer", len(data), buf.Len())
				}
				r, err := c.Decompress(&buf)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("round trip: got %d bytes, want the %d sent", len(got), len(data))
				}
			}
		})
	}
}

// TestZstdWindowLimit refuses a frame that asks for a window over the
// limit before allocating it.
func TestZstdWindowLimit(t *testing.T) {
	// A frame header: magic, descriptor with no single-segment flag, window
	// descriptor 0xF8 (exponent 31: 2 GiB).
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00}
	r, err := encoding.GetCompressor(CompressorZstd).Decompress(bytes.NewReader(frame))
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err == nil || !strings.Contains(err.Error(), "window") {
		t.Fatalf("decoding a frame asking for a 2 GiB window: %v, want a window size error", err)
	}
}

// TestDiscard: the answer is an empty message whatever came, and a failed
// read is the call's error.
func TestDiscard(t *testing.T) {
	readErr := errors.New("stream broke")
	tests := []struct {
		name    string
		dec     func(any) error
		wantErr error
	}{
		{"message", func(v any) error { return (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte("\x0a\x00"))}, v) }, nil},
		{"read fails", func(any) error { return readErr }, readErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discard(context.Background(), tt.dec)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if m, ok := got.(*Message); !ok || m.Len() != 0 {
				t.Errorf("answer %#v, want an empty *Message", got)
			}
		})
	}
}
