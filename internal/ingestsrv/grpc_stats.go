package ingestsrv

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/otelbench/otelbench/internal/signal"
)

// Transport names, the keys of Stats.Transports and the transport label of
// /metrics.
const (
	TransportHTTP = "http"
	TransportGRPC = "grpc"
)

// TransportStats counts what one transport brought: requests and records
// answered OK (durably stored), and rejections by reason (the keys of
// Stats.Rejections). Stats.Signals and Stats.Rejections are the sums over
// transports.
type TransportStats struct {
	Requests   uint64            `json:"requests"`
	Records    uint64            `json:"records"`
	Rejections map[string]uint64 `json:"rejections"`
}

// transportStats splits the totals of st by transport: gRPC counts its own,
// HTTP is the rest.
func (s *Server) transportStats(st Stats) map[string]TransportStats {
	g := TransportStats{Rejections: make(map[string]uint64, numReasons)}
	h := TransportStats{Rejections: make(map[string]uint64, numReasons)}
	for _, sig := range signal.All() {
		req, rec := s.g.stats.requests[sig.Index()].Load(), s.g.stats.records[sig.Index()].Load()
		g.Requests += req
		g.Records += rec
		h.Requests += sub(st.Signals[sig.String()].Requests, req)
		h.Records += sub(st.Signals[sig.String()].Records, rec)
	}
	for r, name := range reasonNames {
		n := s.g.stats.rejections[r].Load()
		g.Rejections[name] = n
		h.Rejections[name] = sub(st.Rejections[name], n)
	}
	return map[string]TransportStats{TransportHTTP: h, TransportGRPC: g}
}

// sub is total - part, never below zero: the totals are read before the
// gRPC counters, which may have moved on by then.
func sub(total, part uint64) uint64 {
	if part > total {
		return 0
	}
	return total - part
}

var (
	descTransportRequests = prometheus.NewDesc("otelbench_ingest_transport_requests_total",
		"OTLP export requests answered OK (durably stored), by transport (http, grpc) and signal.", []string{"transport", "signal"}, nil)
	descTransportRejections = prometheus.NewDesc("otelbench_ingest_transport_rejections_total",
		"Requests (and connections) refused, by transport and reason.", []string{"transport", "reason"}, nil)
)

// transportCollector exports the per-transport split of the counters.
type transportCollector struct{ s *Server }

func (c *transportCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descTransportRequests
	ch <- descTransportRejections
}

func (c *transportCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	for _, sig := range signal.All() {
		g := c.s.g.stats.requests[sig.Index()].Load()
		total := st.Signals[sig.String()].Requests
		ch <- prometheus.MustNewConstMetric(descTransportRequests, prometheus.CounterValue, float64(sub(total, g)), TransportHTTP, sig.String())
		ch <- prometheus.MustNewConstMetric(descTransportRequests, prometheus.CounterValue, float64(g), TransportGRPC, sig.String())
	}
	for name, t := range st.Transports {
		for reason, n := range t.Rejections {
			ch <- prometheus.MustNewConstMetric(descTransportRejections, prometheus.CounterValue, float64(n), name, reason)
		}
	}
}
