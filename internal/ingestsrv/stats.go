package ingestsrv

import (
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/otelbench/otelbench/internal/query"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// rejectReason indexes the rejection counters; the names are the keys of
// /api/v1/stats "rejections" and the reason label of /metrics.
type rejectReason int

const (
	reasonDecode rejectReason = iota
	reasonTooLarge
	reasonUnsupportedMedia
	reasonMethod
	reasonQueueFull
	reasonShuttingDown
	reasonStorage
	reasonUnauthorized
	reasonConnLimit      // a connection past MaxConns, answered 503 by the rejecter
	reasonConnRefused    // a connection past MaxConns and MaxRejecting, closed unanswered
	reasonConnIdle       // a connection past MaxConns that sent no request in time, closed
	reasonTooCostly      // decoding would need more memory than the whole in-flight budget (413)
	reasonTooDeep        // an AnyValue nested to the recursion limit (400)
	reasonSlowBody       // a body slower than MinBodyRate (408)
	reasonConnSource     // a connection past MaxConnsPerSource for its source address
	reasonTooManyRecords // more records than MaxRecords in one request (413)
	numReasons
)

var reasonNames = [numReasons]string{
	"decode", "too_large", "unsupported_media", "method", "queue_full", "shutting_down", "storage", "unauthorized",
	"conn_limit", "conn_refused", "conn_idle", "too_costly", "too_deep", "slow_body", "conn_source_limit",
	"too_many_records",
}

// counters are the server's own counts; "accepted" counts only requests
// answered 200 (after store.Append returned nil).
type counters struct {
	requests, records, bytes [signal.Count]atomic.Uint64 // indexed by signal.Signal.Index
	rejections               [numReasons]atomic.Uint64
}

func (c *counters) accepted(sig signal.Signal, records, bytes int) {
	c.requests[sig.Index()].Add(1)
	c.records[sig.Index()].Add(uint64(records))
	c.bytes[sig.Index()].Add(uint64(bytes))
}

func (c *counters) rejected(r rejectReason) { c.rejections[r].Add(1) }

// Stats is the JSON document of GET /api/v1/stats (keys fixed by
// CONTRACTS.md). Signals and Rejections count since the process started;
// TotalsSinceCreated counts since the data directory was created, read from
// the database and kept in it.
type Stats struct {
	Signals            map[string]SignalStats `json:"signals"`
	TotalsSinceCreated TotalsStats            `json:"totals_since_created"`
	Rejections         map[string]uint64      `json:"rejections"`
	Queue              QueueStats             `json:"queue"`
	Projection         ProjectionStats        `json:"projection"`
	// Transports splits the requests and rejections by transport (http,
	// grpc).
	Transports map[string]TransportStats `json:"transports"`
}

// SignalStats counts one signal. Requests, Records and Bytes (protobuf
// payload) count what was answered 200, i.e. durably stored.
type SignalStats struct {
	Requests         uint64 `json:"requests"`
	Records          uint64 `json:"records"`
	RecordsProjected uint64 `json:"records_projected"`
	Bytes            uint64 `json:"bytes"`
}

// TotalsStats counts since the data directory was created (store.Totals):
// Signals what was durably stored and projected, Unprojectable the raw rows
// (and their records) no projector could decode, kept with their payloads in the unprojectable table.
type TotalsStats struct {
	Signals              map[string]SignalStats `json:"signals"`
	Unprojectable        uint64                 `json:"unprojectable"`
	UnprojectableRecords uint64                 `json:"unprojectable_records"`
}

// QueueStats is the group-commit queue now and its limits.
type QueueStats struct {
	Requests    int64 `json:"requests"`
	Bytes       int64 `json:"bytes"`
	MaxRequests int64 `json:"max_requests"`
	MaxBytes    int64 `json:"max_bytes"`
	// WriterBusySeconds is the time the single writer that drains the queue
	// spent committing and answering (the rest it waited for requests).
	WriterBusySeconds float64 `json:"writer_busy_seconds"`
}

// ProjectionStats is how far projection trails the raw store.
type ProjectionStats struct {
	LagRecords int64   `json:"lag_records"`
	LagSeconds float64 `json:"lag_seconds"`
	// Deferring: the projector waits now because ingest saturates the writer
	// and the machine; DeferredSeconds is how long it has so waited in all.
	Deferring       bool    `json:"deferring"`
	DeferredSeconds float64 `json:"deferred_seconds"`
	// Pages are the projector's telemetry.db page counters since start
	// (sqlite3_db_status): pages written to the WAL (spills included), pages
	// spilled mid-transaction by an overflowing page cache, and pages read.
	// Divided by records projected they are the write amplification of the
	// relational tables and their indexes, exact where timings are noisy.
	PagesWritten uint64 `json:"pages_written"`
	PagesSpilled uint64 `json:"pages_spilled"`
	PagesRead    uint64 `json:"pages_read"`
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	st := s.store.Stats()
	out := Stats{
		Signals:    make(map[string]SignalStats, signal.Count),
		Rejections: make(map[string]uint64, numReasons),
		Queue: QueueStats{
			Requests: st.QueueRequests, Bytes: st.QueueBytes,
			MaxRequests: st.MaxQueueRequests, MaxBytes: st.MaxQueueBytes,
			WriterBusySeconds: st.WriterBusy.Seconds(),
		},
		Projection: ProjectionStats{
			LagRecords: st.LagRecords, LagSeconds: st.LagSeconds,
			Deferring: st.ProjectionDeferring, DeferredSeconds: st.ProjectionDeferred.Seconds(),
			PagesWritten: st.ProjectionPages.Written, PagesSpilled: st.ProjectionPages.Spilled,
			PagesRead: st.ProjectionPages.Read,
		},
	}
	out.TotalsSinceCreated = TotalsStats{Signals: make(map[string]SignalStats, signal.Count),
		Unprojectable: st.Unprojectable, UnprojectableRecords: st.UnprojectableRecords}
	for _, sig := range signal.All() {
		d := st.Durable.Signal(sig)
		out.TotalsSinceCreated.Signals[sig.String()] = SignalStats{Requests: d.Requests, Records: d.Records,
			Bytes: d.Bytes, RecordsProjected: d.RecordsProjected}
		out.Signals[sig.String()] = SignalStats{
			Requests:         s.stats.requests[sig.Index()].Load(),
			Records:          s.stats.records[sig.Index()].Load(),
			Bytes:            s.stats.bytes[sig.Index()].Load(),
			RecordsProjected: st.Signal(sig).RecordsProjected,
		}
	}
	for r, name := range reasonNames {
		out.Rejections[name] = s.stats.rejections[r].Load()
	}
	out.Transports = s.transportStats(out)
	return out
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	if query.RefuseUnknownParams(w, r, query.StatsRoute) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.Stats())
}

// storeStats is used by the Prometheus collector for counters only the store has.
func (s *Server) storeStats() store.Stats { return s.store.Stats() }
