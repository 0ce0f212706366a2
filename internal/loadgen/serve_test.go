package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"slices"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otelbench/otelbench/internal/ingestsrv"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// serveTarget is `otelbench serve` in this process, on loopback HTTP and gRPC listeners and a
// data directory of the test's, with projection off.
type serveTarget struct {
	url      string // the HTTP listener: http://host:port
	grpcAddr string // the gRPC listener: host:port
	dir      string
	// stop stops serve (SIGTERM's graceful drain) once, however often it is called, and returns
	// the records it stored, by signal.
	stop func() map[string]uint64
}

// startServe runs serve with cfg, but for the data directory, projection and logger it sets,
// until stop or the test's end.
func startServe(t *testing.T, cfg ingestsrv.Config) *serveTarget {
	t.Helper()
	cfg.Dir, cfg.NoProjection, cfg.Logger = t.TempDir(), true, slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := ingestsrv.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lns [2]net.Listener // HTTP, gRPC
	for i := range lns {
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			_ = srv.Close(context.Background())
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeWithGRPC(ctx, lns[0], lns[1]) }() // owned: stop cancels ctx and waits
	st := &serveTarget{url: "http://" + lns[0].Addr().String(), grpcAddr: lns[1].Addr().String(), dir: cfg.Dir}
	st.stop = sync.OnceValue(func() map[string]uint64 {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		stored := map[string]uint64{}
		for name, s := range srv.Stats().Signals {
			stored[name] = s.Records
		}
		return stored
	})
	t.Cleanup(func() { st.stop() })
	return st
}

// stored returns the raw request bodies serve stored for sig (after stop).
func (st *serveTarget) stored(t *testing.T, sig signal.Signal) [][]byte {
	t.Helper()
	st.stop()
	db, err := store.Open(context.Background(), store.Config{Dir: st.dir, NoProjection: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var out [][]byte
	err = db.ScanRaw(func(r rawlog.Row) error {
		if r.Signal == sig {
			out = append(out, slices.Clone(r.Payload))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServeStoresUniqueTraces loads serve three times with the same seed (with compression, so
// ids are patched before compressing, and in OTLP-JSON, whose hex ids are patched): the stored spans hold as many distinct trace ids as the
// runs sent traces, each with the configured spans, every span id once, every parent a span of
// its own trace.
func TestServeStoresUniqueTraces(t *testing.T) {
	const per, records, requests = 5, 20, 30
	st := startServe(t, ingestsrv.Config{Config: store.Config{KeepRaw: true}})
	var sent uint64
	runs := []struct {
		proto Protocol
		comp  otlpgen.Compression
	}{{ProtocolHTTPProtobuf, otlpgen.CompressionNone}, {ProtocolHTTPProtobuf, otlpgen.CompressionZstd}, {ProtocolHTTPJSON, otlpgen.CompressionGzip}}
	for run, r := range runs {
		rep, err := Run(context.Background(), Config{
			Endpoint: st.url, Requests: requests, Concurrency: 4, Mix: Mix{0, 0, 1}, Protocol: r.proto,
			Payload: otlpgen.Config{Records: records, SpansPerTrace: per, PoolSize: 4, Seed: 7, Compression: r.comp},
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Totals.Status.S2xx != requests {
			t.Fatalf("run %d: %d of %d requests got a 2xx: %+v", run, rep.Totals.Status.S2xx, requests, rep.Failures)
		}
		sent += rep.Config.TracesSent
	}
	if want := uint64(len(runs) * requests * records / per); sent != want {
		t.Fatalf("the reports say %d traces sent, want %d", sent, want)
	}
	spansOf := map[pcommon.TraceID]int{}
	traceOf := map[pcommon.SpanID]pcommon.TraceID{}
	type link struct {
		span, parent pcommon.SpanID
		trace        pcommon.TraceID
	}
	var links []link
	for _, body := range st.stored(t, signal.Traces) {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		rss := req.Traces().ResourceSpans()
		for r := range rss.Len() {
			spans := rss.At(r).ScopeSpans().At(0).Spans()
			for i := range spans.Len() {
				s := spans.At(i)
				spansOf[s.TraceID()]++
				if _, dup := traceOf[s.SpanID()]; dup {
					t.Errorf("span id %v stored twice", s.SpanID())
				}
				traceOf[s.SpanID()] = s.TraceID()
				links = append(links, link{s.SpanID(), s.ParentSpanID(), s.TraceID()})
			}
		}
	}
	if uint64(len(spansOf)) != sent {
		t.Errorf("serve holds %d distinct trace ids, want %d (one per trace sent)", len(spansOf), sent)
	}
	for id, n := range spansOf {
		if n != per {
			t.Errorf("trace %v has %d spans, want %d", id, n, per)
		}
	}
	for _, l := range links {
		if !l.parent.IsEmpty() && traceOf[l.parent] != l.trace {
			t.Errorf("span %v: parent %v is not a span of its trace", l.span, l.parent)
		}
	}
}

// TestServeCountersAdvance loads serve with metrics for ten passes over the pool: every
// stored cumulative counter grows from send to send, and the growth of the stored series (a
// rate over them) matches what the report says was sent within 1%.
func TestServeCountersAdvance(t *testing.T) {
	const pool, requests = 4, 40
	st := startServe(t, ingestsrv.Config{Config: store.Config{KeepRaw: true}})
	rep, err := Run(context.Background(), Config{
		Endpoint: st.url, Requests: requests, Concurrency: 2, Mix: Mix{0, 1, 0},
		Payload: otlpgen.Config{Records: 25, PoolSize: pool},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Status.S2xx != requests || rep.Config.CounterIncrease == 0 {
		t.Fatalf("%d of %d requests got a 2xx, counter increase %d", rep.Totals.Status.S2xx, requests, rep.Config.CounterIncrease)
	}
	type sample struct {
		at    pcommon.Timestamp
		value int64
	}
	series := map[string][]sample{}
	for _, body := range st.stored(t, signal.Metrics) {
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		rm := req.Metrics().ResourceMetrics().At(0)
		inst, _ := rm.Resource().Attributes().Get("service.instance.id")
		ms := rm.ScopeMetrics().At(0).Metrics()
		for i := range ms.Len() {
			m := ms.At(i)
			if m.Type() != pmetric.MetricTypeSum || !m.Sum().IsMonotonic() {
				continue
			}
			for j := range m.Sum().DataPoints().Len() {
				dp := m.Sum().DataPoints().At(j)
				k := inst.Str() + m.Name() + fmt.Sprint(dp.Attributes().AsRaw())
				series[k] = append(series[k], sample{dp.Timestamp(), dp.IntValue()})
				if dp.StartTimestamp() >= dp.Timestamp() {
					t.Errorf("%s: start %v not before time %v", k, dp.StartTimestamp(), dp.Timestamp())
				}
			}
		}
	}
	var increase int64
	var from, to pcommon.Timestamp
	for k, ss := range series {
		slices.SortFunc(ss, func(a, b sample) int { return cmp.Compare(a.at, b.at) })
		if len(ss) != requests/pool {
			t.Errorf("%s: %d samples, want %d (one per pass)", k, len(ss), requests/pool)
		}
		for i := 1; i < len(ss); i++ {
			if ss[i].value <= ss[i-1].value {
				t.Errorf("%s: %d after %d, want growth at every send", k, ss[i].value, ss[i-1].value)
			}
		}
		increase += ss[len(ss)-1].value - ss[0].value
		if from == 0 || ss[0].at < from {
			from = ss[0].at
		}
		to = max(to, ss[len(ss)-1].at)
	}
	// Rates over the same window: the stored series' growth and the growth the run sent.
	window := to.AsTime().Sub(from.AsTime()).Seconds()
	stored, want := float64(increase)/window, float64(rep.Config.CounterIncrease)/window
	if math.Abs(stored-want) > 0.01*want {
		t.Errorf("rate over the stored counters %.1f/s, rate sent %.1f/s: more than 1%% apart", stored, want)
	}
}
