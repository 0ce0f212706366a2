package ingestsrv

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// latencyBuckets span a durable ingest answer: a group commit's fsync takes
// a few milliseconds on an SSD, a queue under load tens of milliseconds,
// and the write timeout is 120 s.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120}

// ingestLatency is the histogram otelbench_ingest_request_duration_seconds:
// from a request's head read to its answer written, by signal, transport
// and status code. Rejections are answered fast; the code label keeps them
// apart from the 200s whose latency includes the group commit.
type ingestLatency struct {
	vec *prometheus.HistogramVec
	ok  [signal.Count]prometheus.Observer // code 200 over HTTP: no label lookup on the hot path
	// okGRPC is code OK over gRPC, likewise.
	okGRPC [signal.Count]prometheus.Observer
}

func newIngestLatency() *ingestLatency {
	l := &ingestLatency{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "otelbench_ingest_request_duration_seconds",
		Help:    "OTLP export requests from request head read (gRPC: message read) to answer written, by signal, transport and status code (HTTP status, or gRPC code name).",
		Buckets: latencyBuckets,
	}, []string{"signal", "transport", "code"})}
	for _, sig := range signal.All() {
		l.ok[sig.Index()] = l.vec.WithLabelValues(sig.String(), TransportHTTP, "200")
		l.okGRPC[sig.Index()] = l.vec.WithLabelValues(sig.String(), TransportGRPC, otlpgrpc.CodeName(codes.OK))
	}
	return l
}

// observe records one answer over HTTP.
func (l *ingestLatency) observe(sig signal.Signal, status int, d time.Duration) {
	if status == 200 {
		l.ok[sig.Index()].Observe(d.Seconds())
		return
	}
	l.vec.WithLabelValues(sig.String(), TransportHTTP, strconv.Itoa(status)).Observe(d.Seconds())
}

// observeGRPC records one answer over gRPC, labelled with its code's name
// (OK, UNAVAILABLE, ...).
func (l *ingestLatency) observeGRPC(sig signal.Signal, code codes.Code, d time.Duration) {
	if code == codes.OK {
		l.okGRPC[sig.Index()].Observe(d.Seconds())
		return
	}
	l.vec.WithLabelValues(sig.String(), TransportGRPC, otlpgrpc.CodeName(code)).Observe(d.Seconds())
}
