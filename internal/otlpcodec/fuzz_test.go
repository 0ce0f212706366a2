package otlpcodec_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/signal"
)

// seeds returns valid requests of sig in enc, with and without rejected
// records, plus a few malformed bodies.
func seeds(t testing.TB, sig signal.Signal, enc otlpcodec.Encoding) [][]byte {
	var msgs []otlptest.Message
	switch sig {
	case signal.Logs:
		// Values nested just under and at the depth limit: accepted ones must re-decode.
		msgs = []otlptest.Message{otlptest.Logs(0, 1), otlptest.Logs(5, 3),
			otlptest.NestedLogs(49, false), otlptest.NestedLogs(50, false), otlptest.NestedLogs(34, true)}
	case signal.Metrics:
		msgs = []otlptest.Message{otlptest.Metrics(0, 5, 0), otlptest.Metrics(0, 10, 2)}
	case signal.Traces:
		msgs = []otlptest.Message{otlptest.Traces(0, 2, 0), otlptest.Traces(0, 2, 2)}
	}
	out := [][]byte{nil, []byte("{}"), []byte("\x0a\x00"), []byte("\xff")}
	for _, m := range msgs {
		out = append(out, otlptest.Encode(t, m, enc))
	}
	return out
}

// fuzzDecode checks Decode on arbitrary input: it never panics, fails only
// with ErrCorrupt, and what it accepts re-decodes from the stored protobuf
// (what the projector reads) to the same records with nothing further
// rejected, whatever the encoding it arrived in.
func fuzzDecode(f *testing.F, sig signal.Signal, enc otlpcodec.Encoding) {
	for _, s := range seeds(f, sig, enc) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := otlpcodec.Decode(sig, enc, bytes.Clone(body), nil)
		if err != nil {
			if !errors.Is(err, otlpcodec.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := otlpcodec.Decode(sig, otlpcodec.EncodingProto, req.Payload, nil)
		if err != nil {
			t.Fatalf("stored payload does not decode: %v", err)
		}
		if again.Records != req.Records || again.Rejected != 0 {
			t.Fatalf("stored payload holds %d records (%d rejected), want %d (0)", again.Records, again.Rejected, req.Records)
		}
	})
}

func FuzzDecodeLogsProto(f *testing.F) { fuzzDecode(f, signal.Logs, otlpcodec.EncodingProto) }
func FuzzDecodeLogsJSON(f *testing.F)  { fuzzDecode(f, signal.Logs, otlpcodec.EncodingJSON) }
func FuzzDecodeMetricsProto(f *testing.F) {
	fuzzDecode(f, signal.Metrics, otlpcodec.EncodingProto)
}
func FuzzDecodeMetricsJSON(f *testing.F) {
	fuzzDecode(f, signal.Metrics, otlpcodec.EncodingJSON)
}
func FuzzDecodeTracesProto(f *testing.F) {
	fuzzDecode(f, signal.Traces, otlpcodec.EncodingProto)
}
func FuzzDecodeTracesJSON(f *testing.F) {
	fuzzDecode(f, signal.Traces, otlpcodec.EncodingJSON)
}

// fuzzReadBody checks that decompression of arbitrary input never panics,
// never returns more than the limit, and classifies every failure.
func fuzzReadBody(f *testing.F, c otlpcodec.Compression) {
	for _, s := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("otel"), 300)} {
		b, err := otlpcodec.Compress(nil, s, c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := otlpcodec.ReadBody(nil, bytes.NewReader(body), c, limit, -1, nil)
		if err != nil {
			if !errors.Is(err, otlpcodec.ErrCorrupt) && !errors.Is(err, otlpcodec.ErrTooLarge) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrTooLarge", err)
			}
			return
		}
		if len(out) > limit {
			t.Fatalf("got %d bytes, limit %d", len(out), limit)
		}
	})
}

func FuzzReadBodyGzip(f *testing.F) { fuzzReadBody(f, otlpcodec.CompressionGzip) }
func FuzzReadBodyZstd(f *testing.F) { fuzzReadBody(f, otlpcodec.CompressionZstd) }
