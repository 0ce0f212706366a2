package otlpgen

import (
	"bytes"
	"fmt"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/signal"
)

// Payload is one encoded, possibly compressed, OTLP export request body.
// Body is shared by every send of the payload and must not be modified.
type Payload struct {
	Signal          signal.Signal
	Body            []byte
	Records         int    // records in the request (log records, data points, spans)
	RawBytes        int    // encoded size before compression
	ContentType     string // application/x-protobuf or application/json
	ContentEncoding string // "" (none), "gzip" or "zstd"
	Traces          int    // trace trees in a traces payload

	raw  []byte     // the uncompressed body (Body itself without compression), what Patch copies
	plan *patchPlan // what Patch rewrites; nil for OTLP-JSON
}

// Pool holds cfg.PoolSize pre-encoded payloads per signal.
type Pool struct {
	cfg      Config
	payloads [signal.Count][]Payload
}

// NewPool validates cfg, generates and encodes the payloads of the requested
// signals. The work is deterministic for a given Seed and BaseTime.
func NewPool(cfg Config, signals ...signal.Signal) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Pool{cfg: cfg}
	enc, closeEnc, err := newCompressor(cfg.Compression)
	if err != nil {
		return nil, err
	}
	defer closeEnc()
	for _, sig := range signals {
		if !sig.Valid() {
			return nil, fmt.Errorf("new pool: invalid signal %v", sig)
		}
		// One generator per signal, so adding a signal to the mix does not
		// change the payloads of the others.
		g := newGenerator(cfg)
		// Index, not the value: the payloads stay those of the former 0-based numbering.
		g.rng.Uint64N(uint64(sig.Index()) + 1)
		ps := make([]Payload, cfg.PoolSize)
		for i := range ps {
			g.resetIDs()
			raw, records, err := g.encode(sig, i)
			if err != nil {
				return nil, fmt.Errorf("encode %s payload: %w", sig, err)
			}
			body, err := enc(raw)
			if err != nil {
				return nil, fmt.Errorf("compress %s payload: %w", sig, err)
			}
			ps[i] = Payload{
				Signal: sig, Body: body, raw: raw, Records: records, RawBytes: len(raw),
				ContentType: cfg.Encoding.ContentType(),
			}
			if sig == signal.Traces {
				ps[i].Traces = len(g.traceIDs)
			}
			if cfg.Encoding == EncodingProto {
				ps[i].plan, err = planPatches(sig, raw, g.traceIDs, g.spanIDs)
			} else {
				ps[i].plan, err = planJSON(sig, raw, g.traceIDs, g.spanIDs)
			}
			if err != nil {
				return nil, err
			}
			if cfg.Compression != CompressionNone {
				ps[i].ContentEncoding = string(cfg.Compression)
			}
		}
		p.payloads[sig.Index()] = ps
	}
	return p, nil
}

// Config returns the configuration the pool was built with, defaults applied.
func (p *Pool) Config() Config { return p.cfg }

// CanStamp reports whether Payload.Patch moves times and advances values: the encoding is
// protobuf, whose fixed64 fields keep their width. OTLP-JSON bodies get new ids only. (Either
// way, compressed payloads are patched uncompressed and compressed at send time.)
func (p *Pool) CanStamp() bool { return p.cfg.Encoding == EncodingProto }

// MinTraceSpans is the fewest spans a trace of the pool has: the size of the last, partial,
// tree of a payload, or SpansPerTrace.
func (p *Pool) MinTraceSpans() int {
	n := min(p.cfg.SpansPerTrace, p.cfg.Records)
	if r := p.cfg.Records % p.cfg.SpansPerTrace; r > 0 {
		n = min(n, r)
	}
	return n
}

// StampShift is the shift that gives the pool's records the times they would have if the pool
// were encoded at now (BaseTime is the pool's "now").
func (p *Pool) StampShift(now time.Time) int64 { return now.UnixNano() - p.cfg.BaseTime.UnixNano() }

// Payloads returns the payloads of sig (nil if the signal was not requested).
func (p *Pool) Payloads(sig signal.Signal) []Payload { return p.payloads[sig.Index()] }

// Get returns payload number i (modulo the pool size) of sig.
func (p *Pool) Get(sig signal.Signal, i uint64) *Payload {
	ps := p.payloads[sig.Index()]
	return &ps[i%uint64(len(ps))]
}

// Pass returns how many times payload number i of sig has come round before send i: i divided
// by the pool size.
func (p *Pool) Pass(sig signal.Signal, i uint64) uint64 {
	return i / uint64(len(p.payloads[sig.Index()]))
}

// encode builds payload number i of sig and marshals it as an Export*Request.
func (g *generator) encode(sig signal.Signal, i int) ([]byte, int, error) {
	json := g.cfg.Encoding == EncodingJSON
	switch sig {
	case signal.Logs:
		ld := g.logs()
		req := plogotlp.NewExportRequestFromLogs(ld)
		b, err := marshal(json, req.MarshalJSON, req.MarshalProto)
		return b, ld.LogRecordCount(), err
	case signal.Metrics:
		md := g.metrics(i)
		req := pmetricotlp.NewExportRequestFromMetrics(md)
		b, err := marshal(json, req.MarshalJSON, req.MarshalProto)
		return b, md.DataPointCount(), err
	case signal.Traces:
		td := g.traces()
		req := ptraceotlp.NewExportRequestFromTraces(td)
		b, err := marshal(json, req.MarshalJSON, req.MarshalProto)
		return b, td.SpanCount(), err
	}
	return nil, 0, fmt.Errorf("unknown signal %d", sig)
}

func marshal(json bool, mj, mp func() ([]byte, error)) ([]byte, error) {
	if json {
		return mj()
	}
	return mp()
}

// newCompressor returns the body transform of a Compression and a func that
// releases it.
func newCompressor(c Compression) (func([]byte) ([]byte, error), func(), error) {
	nop := func() {}
	switch c {
	case CompressionNone:
		return func(b []byte) ([]byte, error) { return b, nil }, nop, nil
	case CompressionGzip:
		return func(b []byte) ([]byte, error) {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			if _, err := w.Write(b); err != nil {
				return nil, err
			}
			if err := w.Close(); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		}, nop, nil
	case CompressionZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, nop, fmt.Errorf("zstd encoder: %w", err)
		}
		return func(b []byte) ([]byte, error) { return enc.EncodeAll(b, nil), nil },
			func() { _ = enc.Close() }, nil
	}
	return nil, nop, fmt.Errorf("%w: compression %q", ErrInvalidConfig, c)
}
