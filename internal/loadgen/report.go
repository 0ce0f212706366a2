package loadgen

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/otelbench/otelbench/internal/reportfile"
	"github.com/otelbench/otelbench/internal/signal"
)

// Schema identifies the JSON report format; docs/load-report.md documents it. Version 2 added
// fields only (run id, ids and values modes, request outcomes, failures, stages, find-max), so
// a v1 report reads as a v2 one with them empty.
const Schema = "otelbench.load/v2"

// SchemaV1 is the previous version, still read by ReadReport and Merge.
const SchemaV1 = "otelbench.load/v1"

// knownSchema reports whether s is a report version this package reads.
func knownSchema(s string) bool { return s == Schema || s == SchemaV1 }

// Report is the result of a run, marshalling to the "otelbench.load/v2" JSON.
type Report struct {
	Schema          string                  `json:"schema"`
	Started         time.Time               `json:"started"`
	DurationSeconds float64                 `json:"duration_seconds"`
	Interrupted     bool                    `json:"interrupted"` // stopped by context cancellation (Ctrl-C)
	Merged          int                     `json:"merged,omitempty"`
	Shard           *Shard                  `json:"shard,omitempty"`  // one shard of a distributed load
	Shards          []Shard                 `json:"shards,omitempty"` // merged: the parts, in input order
	Config          ReportConfig            `json:"config"`
	Totals          SignalStats             `json:"totals"`
	Signals         map[string]*SignalStats `json:"signals"`
	// Failures groups failed attempts by cause, most frequent first (v2).
	Failures []Failure `json:"failures,omitempty"`
	// FindMax holds the steps of a --find-max search (v2).
	FindMax *FindMaxResult `json:"find_max,omitempty"`
}

// ReportConfig records what the run was asked to do.
type ReportConfig struct {
	Endpoint        string         `json:"endpoint"`
	Mix             map[string]int `json:"mix"`
	Records         int            `json:"records"`
	Model           string         `json:"model"` // "closed" or "open"
	Concurrency     int            `json:"concurrency"`
	Rate            float64        `json:"rate"`
	Encoding        string         `json:"encoding"`
	Compression     string         `json:"compression"`
	Times           string         `json:"times,omitempty"` // "live" or "replay" (Config.Times); absent in reports before it
	Attrs           int            `json:"attrs"`
	AttrCardinality int            `json:"attr_cardinality"`
	BodyBytes       int            `json:"body_bytes"`
	SpansPerTrace   int            `json:"spans_per_trace"`
	Services        int            `json:"services"`
	Seed            uint64         `json:"seed"`
	DurationSeconds float64        `json:"duration_seconds"` // requested; 0 when stopped by count
	Requests        int64          `json:"requests"`         // requested; 0 when stopped by time
	TimeoutSeconds  float64        `json:"timeout_seconds"`
	Retry           int            `json:"retry"`
	Headers         []string       `json:"headers,omitempty"` // names only

	// Since v2.
	Protocol      string      `json:"protocol,omitempty"`
	Connections   int         `json:"connections,omitempty"` // gRPC connections (0: one per DefaultStreamsPerConn workers)
	RunID         string      `json:"run_id,omitempty"`      // hex, the first half of every trace id
	IDs           string      `json:"ids,omitempty"`         // "unique" or "replay"
	Values        string      `json:"values,omitempty"`      // "advance" or "replay"
	Temporality   string      `json:"temporality,omitempty"`
	Instances     int         `json:"instances,omitempty"`
	TraceServices int         `json:"trace_services,omitempty"`
	ErrorRate     float64     `json:"error_rate,omitempty"`
	LogTraceShare float64     `json:"log_trace_share,omitempty"`
	Stages        []StageJSON `json:"stages,omitempty"`
	TracesSent    uint64      `json:"traces_sent,omitempty"` // trace ids handed out
	// CounterIncrease is how much the monotonic counters sent (http.server.request.count)
	// grew in all: a rate over the stored series, times the run's span, should equal it.
	CounterIncrease uint64 `json:"counter_increase,omitempty"`
}

// StageJSON is a Stage in a report.
type StageJSON struct {
	DurationSeconds float64 `json:"duration_seconds"`
	Target          float64 `json:"target"`
}

// StatusCounts counts responses by status class.
type StatusCounts struct {
	S2xx  int64 `json:"2xx"`
	S400  int64 `json:"400"`
	S413  int64 `json:"413"`
	S415  int64 `json:"415"`
	S429  int64 `json:"429"`
	S503  int64 `json:"503"`
	Other int64 `json:"other"`
}

func (s *StatusCounts) add(code int) {
	switch {
	case code >= 200 && code < 300:
		s.S2xx++
	case code == 400:
		s.S400++
	case code == 413:
		s.S413++
	case code == 415:
		s.S415++
	case code == 429:
		s.S429++
	case code == 503:
		s.S503++
	default:
		s.Other++
	}
}

func (s *StatusCounts) merge(o StatusCounts) {
	s.S2xx += o.S2xx
	s.S400 += o.S400
	s.S413 += o.S413
	s.S415 += o.S415
	s.S429 += o.S429
	s.S503 += o.S503
	s.Other += o.Other
}

// SignalStats is the accounting of one signal (or of all, in Totals).
//
// Requests counts every HTTP attempt: Requests = sum(Status) +
// TransportErrors + Canceled. RecordsAcked counts records of 200 responses
// minus their partial_success rejections. The latency histogram holds one
// value per request that got a response (retried requests count once, from
// their first intended send to the last response).
type SignalStats struct {
	Requests  int64        `json:"requests"`
	Succeeded int64        `json:"succeeded"` // requests whose last attempt got a 2xx (v2)
	Failed    int64        `json:"failed"`    // requests whose last attempt did not (v2)
	Status    StatusCounts `json:"status"`
	// GRPCStatus counts gRPC answers by code name (OTLP/gRPC only; Status then holds their
	// HTTP equivalents, see httpStatus).
	GRPCStatus           map[string]int64 `json:"grpc_status,omitempty"`
	TransportErrors      int64            `json:"transport_errors"`
	Canceled             int64            `json:"canceled"` // aborted in flight by cancellation
	Retries              int64            `json:"retries"`
	ResponseDecodeErrors int64            `json:"response_decode_errors"` // 200s whose body did not decode
	RecordsSent          int64            `json:"records_sent"`
	RecordsAcked         int64            `json:"records_acked"`
	RecordsRejected      int64            `json:"records_rejected"`
	BytesSent            int64            `json:"bytes_sent"`
	RequestsPerSecond    float64          `json:"requests_per_second"`
	RecordsPerSecond     float64          `json:"records_per_second"` // acked records per second
	LateSends            int64            `json:"late_sends"`
	Latency              Percentiles      `json:"latency_ms"`
	LatencyUncorrected   *Percentiles     `json:"latency_uncorrected_ms,omitempty"`
	Histogram            *Histogram       `json:"histogram"`
	HistogramUncorrected *Histogram       `json:"histogram_uncorrected,omitempty"`
}

// Errors returns the requests that did not get a 2xx (canceled ones excluded).
func (s *SignalStats) Errors() int64 {
	return s.Requests - s.Canceled - s.Status.S2xx
}

// ErrorRate returns Errors over the requests that completed (0 if none).
func (s *SignalStats) ErrorRate() float64 {
	n := s.Requests - s.Canceled
	if n <= 0 {
		return 0
	}
	return float64(s.Errors()) / float64(n)
}

// SuccessRatio returns Succeeded over the requests that finished (1 if none did).
func (s *SignalStats) SuccessRatio() float64 {
	n := s.Succeeded + s.Failed
	if n == 0 {
		return 1
	}
	return float64(s.Succeeded) / float64(n)
}

func (s *SignalStats) mergeCounts(o *SignalStats) {
	s.Requests += o.Requests
	s.Succeeded += o.Succeeded
	s.Failed += o.Failed
	s.Status.merge(o.Status)
	for k, v := range o.GRPCStatus {
		if s.GRPCStatus == nil {
			s.GRPCStatus = map[string]int64{}
		}
		s.GRPCStatus[k] += v
	}
	s.TransportErrors += o.TransportErrors
	s.Canceled += o.Canceled
	s.Retries += o.Retries
	s.ResponseDecodeErrors += o.ResponseDecodeErrors
	s.RecordsSent += o.RecordsSent
	s.RecordsAcked += o.RecordsAcked
	s.RecordsRejected += o.RecordsRejected
	s.BytesSent += o.BytesSent
	s.LateSends += o.LateSends
}

// finish derives the rates, percentiles and encoded histograms.
func (s *SignalStats) finish(seconds float64, h, hu *hdrhistogram.Histogram) error {
	if seconds > 0 {
		s.RequestsPerSecond = float64(s.Requests) / seconds
		s.RecordsPerSecond = float64(s.RecordsAcked) / seconds
	}
	s.Latency = percentiles(h)
	var err error
	if s.Histogram, err = encodeHistogram(h); err != nil {
		return err
	}
	if hu != nil {
		p := percentiles(hu)
		s.LatencyUncorrected = &p
		if s.HistogramUncorrected, err = encodeHistogram(hu); err != nil {
			return err
		}
	}
	return nil
}

// ErrTooManyErrors is returned by CheckErrorRate.
var ErrTooManyErrors = errors.New("error rate exceeded")

// CheckErrorRate returns an error wrapping ErrTooManyErrors when the share
// of failed requests exceeds maxRate (a fraction 0..1), or when requests
// were sent and none got an HTTP response at all.
func (r *Report) CheckErrorRate(maxRate float64) error {
	t := &r.Totals
	if t.Requests > t.Canceled && t.TransportErrors == t.Requests-t.Canceled {
		return fmt.Errorf("%w: all %d requests failed without a response (is the endpoint up?)", ErrTooManyErrors, t.TransportErrors)
	}
	if rate := t.ErrorRate(); rate > maxRate {
		return fmt.Errorf("%w: %.2f%% of requests failed, limit %.2f%%", ErrTooManyErrors, 100*rate, 100*maxRate)
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return reportfile.Write(w, r) }

// ReadReport decodes a JSON report and checks its schema.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := reportfile.Read(rd, &r, func() string { return r.Schema }, Schema, SchemaV1); err != nil {
		return nil, err
	}
	return &r, nil
}

// Merge combines reports of runs made at the same time from several
// machines against one target: counts add up, histograms merge, the start is
// the earliest, the duration spans the common window from that start to the
// latest end, and rates are recomputed over it.
// The config is the first report's, with rate, concurrency, traces sent and
// counter increase summed, and no run id (each shard has its own).
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("merge: no reports")
	}
	out := &Report{Schema: Schema, Started: reports[0].Started, Config: reports[0].Config,
		Signals: map[string]*SignalStats{}}
	out.Config.Concurrency, out.Config.Rate = 0, 0
	out.Config.TracesSent, out.Config.CounterIncrease, out.Config.RunID = 0, 0, ""
	type hists struct{ h, hu *hdrhistogram.Histogram }
	all := map[string]*hists{}
	end := out.Started
	for i, r := range reports {
		if !knownSchema(r.Schema) {
			return nil, fmt.Errorf("merge report %d: schema %q, want %q or %q", i, r.Schema, Schema, SchemaV1)
		}
		out.Failures = mergeFailures(out.Failures, r.Failures)
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		if e := r.Started.Add(time.Duration(r.DurationSeconds * float64(time.Second))); e.After(end) {
			end = e
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Merged += max(r.Merged, 1)
		out.Config.Concurrency += r.Config.Concurrency
		out.Config.Rate += r.Config.Rate
		out.Config.TracesSent += r.Config.TracesSent
		out.Config.CounterIncrease += r.Config.CounterIncrease
		for name, s := range r.Signals {
			if out.Signals[name] == nil {
				out.Signals[name] = &SignalStats{}
				all[name] = &hists{h: newHistogram()}
			}
			out.Signals[name].mergeCounts(s)
			if err := mergeInto(&all[name].h, s.Histogram); err != nil {
				return nil, fmt.Errorf("merge report %d %s: %w", i, name, err)
			}
			if s.HistogramUncorrected != nil {
				if all[name].hu == nil {
					all[name].hu = newHistogram()
				}
				if err := mergeInto(&all[name].hu, s.HistogramUncorrected); err != nil {
					return nil, fmt.Errorf("merge report %d %s: %w", i, name, err)
				}
			}
		}
	}
	out.DurationSeconds = end.Sub(out.Started).Seconds()
	th, thu := newHistogram(), (*hdrhistogram.Histogram)(nil)
	for name, s := range out.Signals {
		h := all[name]
		if err := s.finish(out.DurationSeconds, h.h, h.hu); err != nil {
			return nil, err
		}
		out.Totals.mergeCounts(s)
		th.Merge(h.h)
		if h.hu != nil {
			if thu == nil {
				thu = newHistogram()
			}
			thu.Merge(h.hu)
		}
	}
	if err := out.Totals.finish(out.DurationSeconds, th, thu); err != nil {
		return nil, err
	}
	return out, nil
}

func mergeInto(dst **hdrhistogram.Histogram, src *Histogram) error {
	h, err := src.Decode()
	if err != nil {
		return err
	}
	if dropped := (*dst).Merge(h); dropped > 0 {
		return fmt.Errorf("%d values out of the histogram range", dropped)
	}
	return nil
}

// signalNames lists the report keys in order.
func signalNames() []string {
	names := make([]string, signal.Count)
	for i, s := range signal.All() {
		names[i] = s.String()
	}
	return names
}
