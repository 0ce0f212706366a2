package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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
// Errors are returned only for invalid configs and payload generation.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	pc := cfg.Payload
	if cfg.isGRPC() {
		pc.Compression = otlpgen.CompressionNone // gRPC compresses each message itself
	}
	pool, err := otlpgen.NewPool(pc, cfg.Mix.Signals()...)
	if err != nil {
		return nil, fmt.Errorf("build payloads: %w", err)
	}
	r := &runner{cfg: cfg, pool: pool, schedule: cfg.Mix.schedule(), stamp: cfg.Times != TimesReplay && pool.CanStamp()}
	for _, sig := range signal.All() {
		r.acc[sig.Index()] = newSignalAcc(cfg.open())
	}
	return r.run(ctx)
}

// exchanger sends payloads for one worker.
type exchanger interface {
	// send posts body, p's Body or a stamped copy of it (runner.body).
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
	schedule []signal.Signal
	exchange func(ctx context.Context) exchanger // one per worker
	pacer    *Pacer
	stamp    bool // move each request's times to its send (Config.Times)
	// freshBodies: a stamped body may not be reused for the next request, because net/http's
	// Transport can still be reading a request's body after Do returned (an early answer).
	freshBodies bool
	start       time.Time
	next        atomic.Int64 // next send number
	acc         [signal.Count]*signalAcc
}

func (r *runner) run(ctx context.Context) (*Report, error) {
	var h1 *h1Sender
	if r.cfg.isGRPC() {
		gs, err := newGRPCSender(r.cfg, r.cfg.Payload.Compression)
		if err != nil {
			return nil, err
		}
		defer gs.close()
		r.exchange = func(context.Context) exchanger { return gs.exchanger(r.cfg) }
		// gRPC may still be writing a body after the call returned (an
		// early answer): a stamped body is never reused.
		r.freshBodies = true
	} else if strings.HasPrefix(r.cfg.Endpoint, "https:") || r.cfg.Sender == SenderNetHTTP {
		s := newSender(r.cfg, r.pool)
		defer s.close()
		r.exchange = func(context.Context) exchanger { return netHTTPExchanger{s} }
		r.freshBodies = true
	} else {
		var err error
		if h1, err = newH1Sender(r.cfg, r.pool); err != nil {
			return nil, err
		}
		r.exchange = func(ctx context.Context) exchanger { return h1.conn(ctx) }
	}
	epoll := h1 != nil && (r.cfg.Sender == SenderEpoll ||
		(r.cfg.Sender == SenderAuto && evSupported && !r.cfg.open() && r.cfg.Retry == 0))

	// stopCtx ends the issuing of new requests (duration reached or ctx
	// done); requests in flight run on ctx, so a timed stop lets them finish
	// while Ctrl-C aborts them.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	r.start = r.cfg.Clock.Now()
	if r.cfg.open() {
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
	prog.wait()
	return r.report(elapsed, ctx.Err() != nil)
}

// worker sends until stopCtx is done or the request budget is spent.
func (r *runner) worker(ctx, stopCtx context.Context) {
	var buf bytes.Buffer
	var body []byte // the stamped copy of the payload being sent
	ex := r.exchange(ctx)
	defer ex.close()
	cycle := int64(len(r.schedule))
	for stopCtx.Err() == nil {
		n := r.next.Add(1) - 1
		if r.cfg.Requests > 0 && n >= r.cfg.Requests {
			return
		}
		sig := r.schedule[n%cycle]
		p := r.pool.Get(sig, uint64(n/cycle))
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
		if r.pacer == nil {
			intended = sent
		}
		if r.freshBodies {
			body = nil
			if rb, ok := ex.(bodyRecycler); ok {
				body = rb.recycled()
			}
		}
		body = r.body(p, body, sent)
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

// body returns what to send of p at sent: with stamping, p's body with its times moved to sent,
// in buf's storage (one buffer per worker or connection, reused where the sender has written a
// body whole before it returns: the epoll loop and h1; see freshBodies); else p.Body itself.
func (r *runner) body(p *otlpgen.Payload, buf []byte, sent time.Time) []byte {
	if !r.stamp {
		return p.Body
	}
	return p.Stamp(buf, r.pool.StampShift(sent))
}

// send sends p, retrying retryable answers as configured, and records
// every attempt and the request's latency.
func (r *runner) send(ctx context.Context, ex exchanger, p *otlpgen.Payload, body []byte, intended, sent time.Time, late bool, buf *bytes.Buffer) {
	acc := r.acc[p.Signal.Index()]
	gotResponse := false
	for try := 0; ; try++ {
		resp, err := ex.send(ctx, p, body, buf)
		gotResponse = r.recordAttempt(ctx, p, resp, err, try > 0) || gotResponse
		if err != nil || !retryable(resp.status) || try >= r.cfg.Retry {
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

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recordAttempt accounts one attempt and reports whether it got a response.
func (r *runner) recordAttempt(ctx context.Context, p *otlpgen.Payload, resp response, err error, retry bool) bool {
	at := attempt{records: int64(p.Records), bytes: int64(len(p.Body))}
	switch {
	case err != nil && ctx.Err() != nil:
		at.canceled = true
	case err != nil:
		at.transport = true
	default:
		at.status, at.grpcCode = resp.status, resp.grpcCode
		if resp.status == 200 {
			rej, derr := parseRejected(p.Signal, resp.contentType, resp.body)
			at.rejected, at.badResponse = rej, derr != nil
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

// report assembles the Report from the accumulators.
func (r *runner) report(elapsed time.Duration, interrupted bool) (*Report, error) {
	cfg := r.cfg
	pc := r.pool.Config()
	rep := &Report{
		Schema: Schema, Started: r.start.UTC(), DurationSeconds: elapsed.Seconds(),
		Interrupted: interrupted, Signals: map[string]*SignalStats{},
		Config: ReportConfig{
			Endpoint: cfg.Endpoint, Mix: map[string]int{}, Records: pc.Records, Model: cfg.model(),
			Concurrency: cfg.Concurrency, Rate: cfg.Rate, Encoding: string(pc.Encoding),
			Compression: string(r.compression()), Protocol: string(cfg.Protocol), Connections: cfg.Connections, Times: string(r.times()), Attrs: pc.Attrs, AttrCardinality: pc.AttrCardinality,
			BodyBytes: pc.BodyBytes, SpansPerTrace: pc.SpansPerTrace, Services: pc.Services, Seed: pc.Seed,
			DurationSeconds: cfg.Duration.Seconds(), Requests: cfg.Requests,
			TimeoutSeconds: cfg.Timeout.Seconds(), Retry: cfg.Retry, Headers: cfg.headerNames(),
		},
	}
	total, totalU := newHistogram(), newHistogram()
	for _, sig := range signal.All() {
		rep.Config.Mix[sig.String()] = cfg.Mix[sig.Index()]
		a := r.acc[sig.Index()]
		a.mu.Lock()
		s := a.stats
		if err := s.finish(elapsed.Seconds(), a.h, a.hu); err != nil {
			a.mu.Unlock()
			return nil, err
		}
		total.Merge(a.h)
		if a.hu != nil {
			totalU.Merge(a.hu)
		}
		a.mu.Unlock()
		rep.Signals[sig.String()] = &s
		rep.Totals.mergeCounts(&s)
	}
	if !cfg.open() {
		totalU = nil
	}
	if err := rep.Totals.finish(elapsed.Seconds(), total, totalU); err != nil {
		return nil, err
	}
	return rep, nil
}
