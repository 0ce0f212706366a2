package ingestsrv

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/otelbench/otelbench/internal/procfd"
	"github.com/otelbench/otelbench/internal/signal"
)

// metricsHandler serves /metrics from a registry of its own (no globals):
// the /api/v1/stats counters, Go runtime and process metrics, with
// process_open_fds from procfd's fast path (one stat(2) of /proc/self/fd
// instead of the process collector's directory listing).
func (s *Server) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		&statsCollector{s: s},
		s.latency.vec,
		&transportCollector{s: s},
		collectors.NewGoCollector(),
		withoutMetric{collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), "process_open_fds"},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "process_open_fds",
			Help: "Number of open file descriptors (procfd fast path: st_size of /proc/self/fd).",
		}, func() float64 {
			n, err := procfd.Self()
			if err != nil {
				return -1
			}
			return float64(n)
		}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil})
}

// withoutMetric drops one metric of a collector, so that a better source can
// export it under the standard name.
type withoutMetric struct {
	prometheus.Collector
	name string
}

func (w withoutMetric) Describe(ch chan<- *prometheus.Desc) {
	all := make(chan *prometheus.Desc)
	go func() { w.Collector.Describe(all); close(all) }()
	for d := range all {
		if !w.is(d) {
			ch <- d
		}
	}
}

func (w withoutMetric) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { w.Collector.Collect(all); close(all) }()
	for m := range all {
		if !w.is(m.Desc()) {
			ch <- m
		}
	}
}

// is matches a Desc by name; Desc exposes its name only through String().
func (w withoutMetric) is(d *prometheus.Desc) bool {
	return strings.Contains(d.String(), `fqName: "`+w.name+`"`)
}

var (
	descRequests = prometheus.NewDesc("otelbench_ingest_requests_total",
		"OTLP export requests answered 200 (durably stored).", []string{"signal"}, nil)
	descRecords = prometheus.NewDesc("otelbench_ingest_records_total",
		"Records (log records, data points, spans) durably stored.", []string{"signal"}, nil)
	descBytes = prometheus.NewDesc("otelbench_ingest_bytes_total",
		"Protobuf payload bytes durably stored.", []string{"signal"}, nil)
	descProjected = prometheus.NewDesc("otelbench_ingest_records_projected_total",
		"Records projected into the relational tables.", []string{"signal"}, nil)
	descRejections = prometheus.NewDesc("otelbench_ingest_rejections_total",
		"Requests not answered 200, by reason.", []string{"reason"}, nil)
	descQueueRequests = prometheus.NewDesc("otelbench_queue_requests",
		"Requests queued for or inside a group commit.", nil, nil)
	descQueueBytes = prometheus.NewDesc("otelbench_queue_bytes",
		"Payload bytes queued for or inside a group commit.", nil, nil)
	descQueueMaxRequests = prometheus.NewDesc("otelbench_queue_max_requests",
		"Queue limit in requests (503 beyond).", nil, nil)
	descQueueMaxBytes = prometheus.NewDesc("otelbench_queue_max_bytes",
		"Queue limit in bytes (503 beyond).", nil, nil)
	descCommits = prometheus.NewDesc("otelbench_store_commits_total",
		"Group-commit transactions committed.", nil, nil)
	descSyncs = prometheus.NewDesc("otelbench_store_syncs_total",
		"Fsyncs of the raw WAL that made group commits durable (--sync full; one may cover several commits).", nil, nil)
	descLagRecords = prometheus.NewDesc("otelbench_projection_lag_records",
		"Records stored but not yet projected.", nil, nil)
	descLagSeconds = prometheus.NewDesc("otelbench_projection_lag_seconds",
		"Age of the oldest unprojected request.", nil, nil)
	descDeferring = prometheus.NewDesc("otelbench_projection_deferring",
		"1 while the projector waits because ingest saturates the writer and the machine.", nil, nil)
	descDeferred = prometheus.NewDesc("otelbench_projection_deferred_seconds_total",
		"Time the projector waited because ingest saturated the writer and the machine.", nil, nil)
	descWriterBusy = prometheus.NewDesc("otelbench_store_writer_busy_seconds_total",
		"Time the single writer spent committing (the rest it waited for requests).", nil, nil)
	descProjPages = prometheus.NewDesc("otelbench_projection_pages_total",
		"telemetry.db pages the projector wrote (spills included), spilled mid-transaction, and read.",
		[]string{"op"}, nil)
	descUnprojectable = prometheus.NewDesc("otelbench_projection_unprojectable_total",
		"Raw rows no projector could decode, kept in the unprojectable table, since the data directory was created.", nil, nil)
	descUnprojectableRecords = prometheus.NewDesc("otelbench_projection_unprojectable_records_total",
		"Records of the raw rows no projector could decode, since the data directory was created.", nil, nil)
	descInflight = prometheus.NewDesc("otelbench_inflight_bytes",
		"Bytes charged to the in-flight memory budget.", nil, nil)
)

// statsCollector exports the same snapshot as /api/v1/stats.
type statsCollector struct{ s *Server }

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descRecords, descBytes, descProjected, descRejections,
		descQueueRequests, descQueueBytes, descQueueMaxRequests, descQueueMaxBytes, descCommits, descSyncs,
		descLagRecords, descLagSeconds, descDeferring, descDeferred, descWriterBusy, descProjPages, descInflight,
		descUnprojectable, descUnprojectableRecords} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	for _, sig := range signal.All() {
		v := st.Signals[sig.String()]
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(v.Requests), sig.String())
		ch <- prometheus.MustNewConstMetric(descRecords, prometheus.CounterValue, float64(v.Records), sig.String())
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(v.Bytes), sig.String())
		ch <- prometheus.MustNewConstMetric(descProjected, prometheus.CounterValue, float64(v.RecordsProjected), sig.String())
	}
	for _, name := range reasonNames {
		ch <- prometheus.MustNewConstMetric(descRejections, prometheus.CounterValue, float64(st.Rejections[name]), name)
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(descQueueRequests, float64(st.Queue.Requests))
	gauge(descQueueBytes, float64(st.Queue.Bytes))
	gauge(descQueueMaxRequests, float64(st.Queue.MaxRequests))
	gauge(descQueueMaxBytes, float64(st.Queue.MaxBytes))
	gauge(descLagRecords, float64(st.Projection.LagRecords))
	gauge(descLagSeconds, st.Projection.LagSeconds)
	deferring := 0.0
	if st.Projection.Deferring {
		deferring = 1
	}
	gauge(descDeferring, deferring)
	ch <- prometheus.MustNewConstMetric(descDeferred, prometheus.CounterValue, st.Projection.DeferredSeconds)
	ch <- prometheus.MustNewConstMetric(descWriterBusy, prometheus.CounterValue, st.Queue.WriterBusySeconds)
	for _, p := range []struct {
		op string
		n  uint64
	}{{"written", st.Projection.PagesWritten}, {"spilled", st.Projection.PagesSpilled}, {"read", st.Projection.PagesRead}} {
		ch <- prometheus.MustNewConstMetric(descProjPages, prometheus.CounterValue, float64(p.n), p.op)
	}
	gauge(descInflight, float64(c.s.budget.used.Load()))
	ss := c.s.storeStats()
	ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(ss.Commits))
	ch <- prometheus.MustNewConstMetric(descSyncs, prometheus.CounterValue, float64(ss.Syncs))
	ch <- prometheus.MustNewConstMetric(descUnprojectable, prometheus.CounterValue, float64(ss.Unprojectable))
	ch <- prometheus.MustNewConstMetric(descUnprojectableRecords, prometheus.CounterValue, float64(ss.UnprojectableRecords))
}
