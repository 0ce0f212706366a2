package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Prefix is where the JSON API is mounted.
const Prefix = "/api/v1"

// DefaultSSEWriteTimeout bounds one SSE write: a client that stops reading
// is cut off after it, even before its buffer fills.
const DefaultSSEWriteTimeout = 10 * time.Second

// Config configures an API.
type Config struct {
	Tail   TailConfig
	Logger *slog.Logger
	// Now is the clock for relative times; nil means time.Now.
	Now func() time.Time
	// SSEKeepAlive is the comment interval on idle live tails; 0 means 15s.
	SSEKeepAlive time.Duration
	// SSEWriteTimeout bounds one SSE write; 0 means DefaultSSEWriteTimeout.
	SSEWriteTimeout time.Duration
}

// API serves /api/v1 over a Reader, with a live tail. Run must be running
// for /logs/stream to deliver.
type API struct {
	r      *Reader
	tail   *Tailer
	cfg    Config
	logger *slog.Logger
}

// New returns an API over r.
func New(r *Reader, cfg Config) *API {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Tail.Logger == nil {
		cfg.Tail.Logger = cfg.Logger
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SSEWriteTimeout <= 0 {
		cfg.SSEWriteTimeout = DefaultSSEWriteTimeout
	}
	if cfg.SSEKeepAlive <= 0 {
		cfg.SSEKeepAlive = 15 * time.Second
	}
	return &API{r: r, tail: NewTailer(r, cfg.Tail), cfg: cfg, logger: cfg.Logger}
}

// Reader returns the API's Reader (the dashboard renders from it).
func (a *API) Reader() *Reader { return a.r }

// Tailer returns the live-tail broadcaster.
func (a *API) Tailer() *Tailer { return a.tail }

// Run runs the live tail until ctx is done.
func (a *API) Run(ctx context.Context) error { return a.tail.Run(ctx) }

// MountOn registers every route with mount (ingestsrv's Server.Mount, or
// an http.ServeMux's Handle). Patterns are method-qualified Go 1.22 mux
// patterns, so they never collide with /api/v1/stats. Every handler runs
// behind checkParams, which refuses a parameter its route does not take.
func (a *API) MountOn(mount func(pattern string, h http.Handler)) {
	for _, rt := range []struct {
		route string // below Prefix, the key of endpointParams
		h     http.HandlerFunc
	}{
		{"/services", a.services},
		{"/logs", a.logs},
		{"/logs/stream", a.logStream},
		{"/traces", a.traces},
		{"/traces/{trace_id}", a.trace},
		{"/metrics/names", a.metricNames},
		{"/metrics/series", a.metricSeries},
	} {
		mount("GET "+Prefix+rt.route, a.checkingParams(rt.route, rt.h))
	}
}

// checkingParams returns h behind checkParams for route.
func (a *API) checkingParams(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkParams(r.URL.Query(), route); err != nil {
			a.fail(w, r, err)
			return
		}
		h(w, r)
	}
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if StatusOf(err) == http.StatusInternalServerError {
		if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
			return // the client left
		}
		a.logger.Error("query", "path", r.URL.Path, "err", err)
	}
	writeError(w, err)
}

func (a *API) services(w http.ResponseWriter, r *http.Request) {
	s, err := a.r.Services(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"services": s})
}

func (a *API) logs(w http.ResponseWriter, r *http.Request) {
	q, err := ParseLogQuery(r.URL.Query(), a.cfg.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	start := time.Now()
	p, plan, err := a.r.Logs(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Server-Timing", serverTiming("db", time.Since(start), string(plan)))
	writeJSON(w, http.StatusOK, p)
}

func (a *API) traces(w http.ResponseWriter, r *http.Request) {
	q, err := ParseTraceQuery(r.URL.Query(), a.cfg.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	t, err := a.r.Traces(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"traces": t})
}

// trace answers GET /traces/{trace_id}, streaming the JSON from the
// tree's columns when the trace was read from trace_chunks. Server-Timing
// says where the time went before the first byte: tree is the wall time
// from the request to the built tree (fetch + decode + tree: the "server
// time" of docs/benchmarks/query.md); db (SQLite: locating the trace,
// reading its chunks or rows), decode (chunks into columns) and build (the
// tree) are its stages, db and decode summed over the parallel readers
// (so they can add up to more than tree). A trailer of the same name adds
// encode (writing the JSON) and total once the body is written.
func (a *API) trace(w http.ResponseWriter, r *http.Request) {
	id, err := ParseTraceID(r.PathValue("trace_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	limit, err := parseLimit(r.URL.Query(), DefaultTraceSpans, MaxTraceSpans)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// The slot is held until the body is written: the tree lives that long.
	release, err := a.r.heavy.acquire(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	defer release()
	start := time.Now()
	var tm traceTiming
	t, v, err := a.r.fetchTrace(r.Context(), id, &tm)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if v != nil {
		defer v.release()
		t = &v.tree
	}
	fetched := time.Now()
	head, err := traceHead(t, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Server-Timing", timing("db", tm.db)+", "+timing("decode", tm.decode)+", "+timing("build", tm.build)+", "+
		serverTiming("tree", fetched.Sub(start), fmt.Sprintf("%d spans", t.SpanCount)))
	h.Set("Trailer", "Server-Timing")
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if writeTraceSpans(w, head, t, v, limit) != nil {
		return // the client went away; nothing useful to do
	}
	end := time.Now()
	// The header is sent; the declared trailer takes the field's new value.
	h.Set("Server-Timing", timing("encode", end.Sub(fetched))+", "+timing("total", end.Sub(start)))
}

func (a *API) metricNames(w http.ResponseWriter, r *http.Request) {
	n, err := a.r.MetricNames(r.Context(), r.URL.Query().Get("service"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"metrics": n})
}

func (a *API) metricSeries(w http.ResponseWriter, r *http.Request) {
	q, err := ParseSeriesQuery(r.URL.Query(), a.cfg.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	s, err := a.r.Series(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// serverTiming formats a Server-Timing header entry (ms, per the spec).
func serverTiming(name string, d time.Duration, desc string) string {
	desc = strings.ReplaceAll(desc, `"`, "")
	return fmt.Sprintf(`%s;dur=%.3f;desc="%s"`, name, float64(d.Microseconds())/1000, desc)
}

// timing formats a Server-Timing entry without a description.
func timing(name string, d time.Duration) string {
	return fmt.Sprintf(`%s;dur=%.3f`, name, float64(d.Microseconds())/1000)
}

// logStream serves the live tail as Server-Sent Events: "event: log" with
// the Log as JSON data, ": keepalive" comments while idle, and a final
// "event: dropped" if the client fell too far behind (Tailer's bounds).
// Frames are the tailer's shared encodings, written without copying; small
// ones are gathered into one write.
func (a *API) logStream(w http.ResponseWriter, r *http.Request) {
	f, err := ParseLogFilter(r.URL.Query(), a.cfg.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	sub, err := a.tail.Subscribe(r.Context(), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	defer sub.Close()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The comment tells the client the subscription is live: anything
	// projected from here on is delivered.
	if !a.sseWrite(w, rc, []byte(": subscribed\n\n")) {
		return
	}
	keep := time.NewTicker(a.cfg.SSEKeepAlive)
	defer keep.Stop()
	var evs []*TailEvent
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if !a.sseWrite(w, rc, []byte(": keepalive\n\n")) {
				return
			}
		case <-sub.Ready():
			var ended bool
			evs, ended = sub.Take(evs[:0], sseBatchBytes)
			ok := a.sseWriteEvents(w, rc, evs)
			sub.Release(evs)
			clear(evs)
			if !ok {
				return
			}
			if ended {
				if sub.Dropped() {
					a.sseWrite(w, rc, []byte(droppedEvent))
				}
				return
			}
		}
	}
}

// sseBatchBytes is how many bytes of frames one write gathers.
const sseBatchBytes = 64 << 10

// sseWriteEvents writes evs' frames and flushes once. The response's
// buffered writer passes a frame larger than its buffer straight to the
// connection, so a big record is never copied per subscriber.
func (a *API) sseWriteEvents(w http.ResponseWriter, rc *http.ResponseController, evs []*TailEvent) bool {
	if len(evs) == 0 {
		return true
	}
	_ = rc.SetWriteDeadline(time.Now().Add(a.cfg.SSEWriteTimeout))
	for _, ev := range evs {
		if _, err := w.Write(ev.Data); err != nil {
			return false
		}
	}
	return rc.Flush() == nil
}

const droppedEvent = "event: dropped\ndata: {\"error\":\"client fell behind; reconnect\"}\n\n"

func (a *API) sseWrite(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(a.cfg.SSEWriteTimeout))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}
