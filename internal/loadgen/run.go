package loadgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/signal"
)

// Run generates the payload pool, drives the endpoint until cfg.Duration or
// cfg.Requests is reached or ctx is done, and returns the report. When ctx
// is canceled (Ctrl-C) the run stops sending, aborts requests in flight
// (counted as canceled) and still returns its report with Interrupted set.
// Errors are returned only for invalid configs, payload generation and TLS
// settings that cannot be loaded.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

func newRunner(cfg Config) (*runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.RunID == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		cfg.RunID = binary.BigEndian.Uint64(b[:]) | 1
	}
	if cfg.Mix[signal.Traces.Index()] == 0 {
		// Logs point their trace context at traces the run sent: without traces, none.
		cfg.Payload.LogTraceShare = 0
	}
	pc := cfg.Payload
	if cfg.isGRPC() {
		pc.Compression = otlpgen.CompressionNone // gRPC compresses each message itself
	}
	pool, err := otlpgen.NewPool(pc, cfg.Mix.Signals()...)
	if err != nil {
		return nil, fmt.Errorf("build payloads: %w", err)
	}
	pc = pool.Config()
	r := &runner{cfg: cfg, pool: pool, schedule: cfg.Mix.sends(),
		failures: newFailureLog(cfg)}
	// Protobuf bodies get times, ids and values; OTLP-JSON ones ids only.
	proto := pool.CanStamp()
	r.stamp = proto && cfg.Times != TimesReplay
	r.ids = !cfg.ReplayIDs
	// Replayed times and ids replay the values too: the pool exactly as encoded.
	r.values = proto && !(cfg.ReplayIDs && cfg.Times == TimesReplay)
	r.compress = pc.Compression != otlpgen.CompressionNone && (r.stamp || r.ids || r.values)
	if r.compress {
		r.compressors.New = func() any {
			z, err := otlpgen.NewCompressor(pc.Compression)
			if err != nil {
				panic(err) // the compression was validated with the config
			}
			return z
		}
	}
	for _, sig := range signal.All() {
		r.acc[sig.Index()] = newSignalAcc(cfg.open())
	}
	return r, nil
}

// exchanger sends payloads for one worker.
type exchanger interface {
	// send posts body (runner.prepare) of p.
	send(ctx context.Context, p *otlpgen.Payload, body []byte, buf *bytes.Buffer) (response, error)
	close()
}

// bodyRecycler is an exchanger that knows when a sent body may be written
// again, for senders that may still read a body after send returned.
type bodyRecycler interface {
	// recycled returns a buffer of an earlier body, or nil.
	recycled() []byte
}

// netHTTPExchanger shares one net/http sender between workers.
type netHTTPExchanger struct{ *sender }

func (netHTTPExchanger) close() {}

type runner struct {
	cfg      Config
	pool     *otlpgen.Pool
	schedule []scheduled
	exchange func(ctx context.Context) exchanger // one per worker
	// closeSender, when set, closes what pickSender opened once the workers are done.
	closeSender func()
	pacer       *Pacer

	// What each send rewrites in its copy of the payload (otlpgen.Payload.Patch): times
	// (Config.Times), trace ids (unless Config.ReplayIDs), counter values (unless both are
	// replayed). Compressed payloads are then compressed at send time.
	stamp, ids, values, compress bool
	compressors                  sync.Pool // *otlpgen.Compressor

	// freshBodies: a body may not be reused for the next request, because net/http's
	// Transport can still be reading a request's body after Do returned (an early answer).
	freshBodies bool
	start       time.Time
	next        atomic.Int64  // next send number
	traces      atomic.Uint64 // traces sent (ids handed out) so far
	// counterIncrease sums the growth of the monotonic counters sent (Report.CounterIncrease).
	counterIncrease atomic.Uint64
	acc             [signal.Count]*signalAcc
	failures        *failureLog
}

func (r *runner) run(ctx context.Context) (*Report, error) {
	h1, epoll, err := r.pickSender()
	if err != nil {
		return nil, err
	}
	if r.closeSender != nil {
		defer r.closeSender()
	}
	// stopCtx ends the issuing of new requests (duration reached or ctx
	// done); requests in flight run on ctx, so a timed stop lets them finish
	// while Ctrl-C aborts them.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := waitUntil(ctx, r.cfg.Clock, r.cfg.StartAt); err != nil {
		return nil, err
	}
	r.start = r.cfg.Clock.Now()
	switch {
	case len(r.cfg.Stages) > 0:
		r.pacer = NewStagedPacer(r.cfg.Clock, r.start, r.cfg.Stages)
	case r.cfg.open():
		r.pacer = NewPacer(r.cfg.Clock, r.start, r.cfg.Rate)
	}
	if r.cfg.Duration > 0 {
		t := time.AfterFunc(r.cfg.Duration, stop)
		defer t.Stop()
	}
	prog := startProgress(stopCtx, r.cfg.Progress, r)

	var wg sync.WaitGroup
	if epoll {
		loops := eventLoops(r.cfg.Concurrency)
		for i := range loops {
			n := r.cfg.Concurrency/loops + btoi(i < r.cfg.Concurrency%loops)
			l, err := newEvLoop(ctx, stopCtx, r, h1, n)
			if err != nil { // no epoll here after all: goroutines instead
				for range n {
					wg.Go(func() { r.worker(ctx, stopCtx) })
				}
				continue
			}
			wg.Go(l.run)
		}
	} else {
		for range r.cfg.Concurrency {
			wg.Go(func() { r.worker(ctx, stopCtx) })
		}
	}
	wg.Wait()
	elapsed := r.cfg.Clock.Now().Sub(r.start)
	stop()
	prog.Wait()
	return r.report(elapsed, ctx.Err() != nil)
}

// pickSender sets r.exchange and reports whether the epoll loop drives the
// connections: the gRPC sender for protocol grpc; h1 (plain or TLS) when every
// signal goes to one host, the epoll loop for its plain-HTTP closed model,
// net/http otherwise.
func (r *runner) pickSender() (h1 *h1Sender, epoll bool, err error) {
	if r.cfg.isGRPC() {
		return nil, false, r.pickGRPCSender()
	}
	one, https := r.cfg.oneHost()
	if !one || r.cfg.Sender == SenderNetHTTP {
		s, err := newSender(r.cfg, r.pool)
		if err != nil {
			return nil, false, err
		}
		r.exchange = func(context.Context) exchanger { return netHTTPExchanger{s} }
		r.freshBodies = true
		return nil, false, nil
	}
	if h1, err = newH1Sender(r.cfg, r.pool); err != nil {
		return nil, false, err
	}
	epoll = !https && (r.cfg.Sender == SenderEpoll ||
		(r.cfg.Sender == SenderAuto && evSupported && !r.cfg.open() && r.cfg.Retry == 0))
	if !epoll {
		r.exchange = func(ctx context.Context) exchanger { return h1.conn(ctx) }
	}
	return h1, epoll, nil
}

// worker sends until stopCtx is done or the request budget is spent.
func (r *runner) worker(ctx, stopCtx context.Context) {
	var buf bytes.Buffer
	var bb bodyBuffers
	ex := r.exchange(ctx)
	defer ex.close()
	for stopCtx.Err() == nil {
		n := r.next.Add(1) - 1
		if r.cfg.Requests > 0 && n >= r.cfg.Requests {
			return
		}
		var intended time.Time
		late := false
		if r.pacer != nil {
			at, lateness, err := r.pacer.Wait(stopCtx, n)
			if err != nil {
				return
			}
			if r.cfg.Duration > 0 && at.Sub(r.start) >= r.cfg.Duration {
				return // past the end of the schedule
			}
			intended, late = at, lateness > r.cfg.LateThreshold
		}
		sent := r.cfg.Clock.Now()
		r.cfg.firstSend.mark(sent)
		if r.pacer == nil {
			intended = sent
		}
		if r.freshBodies {
			bb = bodyBuffers{}
			if rb, ok := ex.(bodyRecycler); ok {
				bb.patched = rb.recycled()
			}
		}
		p, body, err := r.prepare(n, &bb, sent)
		if err != nil {
			r.recordAttempt(ctx, p, 0, response{}, err, false, true)
			continue
		}
		r.send(ctx, ex, p, body, intended, sent, late, &buf)
	}
}

// times is the Times the run sends: live or replay.
func (r *runner) times() Times {
	if r.stamp {
		return TimesLive
	}
	return TimesReplay
}

// send sends p, retrying retryable answers as configured, and records
// every attempt and the request's latency.
func (r *runner) send(ctx context.Context, ex exchanger, p *otlpgen.Payload, body []byte, intended, sent time.Time, late bool, buf *bytes.Buffer) {
	acc := r.acc[p.Signal.Index()]
	gotResponse := false
	for try := 0; ; try++ {
		resp, err := ex.send(ctx, p, body, buf)
		final := err != nil || !retryable(resp.status) || try >= r.cfg.Retry
		gotResponse = r.recordAttempt(ctx, p, len(body), resp, err, try > 0, final) || gotResponse
		if final {
			break
		}
		d := retryDelay(resp.retryAfter, try, time.Now(), r.cfg.RetryMaxWait)
		if resp.hasRetryInfo {
			d = min(resp.retryInfo, r.cfg.RetryMaxWait)
		}
		if r.cfg.Clock.Sleep(ctx, d) != nil {
			break
		}
	}
	if gotResponse {
		end := r.cfg.Clock.Now()
		acc.recordLatency(end.Sub(intended), end.Sub(sent), late)
	} else if late {
		acc.recordLate()
	}
}

// recordAttempt accounts one attempt and reports whether it got a response. final says the
// attempt is the request's last: its outcome is the request's.
func (r *runner) recordAttempt(ctx context.Context, p *otlpgen.Payload, size int, resp response, err error, retry, final bool) bool {
	at := attempt{records: int64(p.Records), bytes: int64(size), final: final}
	switch {
	case err != nil && ctx.Err() != nil:
		at.canceled = true
	case err != nil:
		at.transport = true
		r.failures.record(p.Signal, classifyError(err))
	default:
		at.status, at.grpcCode = resp.status, resp.grpcCode
		if resp.status == 200 {
			rej, derr := parseRejected(p.Signal, resp.contentType, resp.body)
			at.rejected, at.badResponse = rej, derr != nil
		} else if resp.status < 200 || resp.status >= 300 {
			r.failures.record(p.Signal, classifyStatus(resp, r.cfg))
		}
	}
	r.acc[p.Signal.Index()].recordAttempt(at, retry)
	return err == nil
}

// compression is the run's: the pool's, or gRPC's (its pool is uncompressed).
func (r *runner) compression() otlpgen.Compression {
	if r.cfg.isGRPC() && r.cfg.Payload.Compression != "" {
		return r.cfg.Payload.Compression
	}
	return r.pool.Config().Compression
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errNoBody marks a send whose body could not be built (compression failed).
var errNoBody = errors.New("build request body")
