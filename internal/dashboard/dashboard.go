package dashboard

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/otelbench/otelbench/internal/query"
)

// Defaults.
const (
	// DefaultBase is where the dashboard is mounted.
	DefaultBase = "/ui"
	// DefaultMaxWaterfallSpans bounds the rows one waterfall draws; a
	// 161,000-span trace would make a 3 MB SVG no browser enjoys.
	DefaultMaxWaterfallSpans = 2000
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures a Dashboard.
type Config struct {
	Base              string // mount prefix; "" means DefaultBase
	MaxWaterfallSpans int    // 0 means DefaultMaxWaterfallSpans
	Logger            *slog.Logger
	Now               func() time.Time
	// LogoutPath, when set, puts a logout button in the navigation of
	// every page a request carrying the SessionCookie asks for: the pages
	// a browser reached by logging in. Token (header) clients see none.
	LogoutPath    string
	SessionCookie string
}

// Dashboard serves the HTML pages.
type Dashboard struct {
	r     *query.Reader
	cfg   Config
	pages map[string]*template.Template
}

var funcs = template.FuncMap{
	"ts": func(ns int64) string {
		if ns == 0 {
			return ""
		}
		return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.000")
	},
	"dur":  func(ns int64) string { return fmtDur(time.Duration(ns)) },
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"sev": func(n int32, text string) string {
		if text != "" {
			return text
		}
		return severityName(n)
	},
}

func severityName(n int32) string {
	names := []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
	if n < 1 || n > 24 {
		return "UNSET"
	}
	return names[(n-1)/4]
}

// New parses the templates and returns a Dashboard reading from r.
func New(r *query.Reader, cfg Config) (*Dashboard, error) {
	if cfg.Base == "" {
		cfg.Base = DefaultBase
	}
	cfg.Base = strings.TrimSuffix(cfg.Base, "/")
	if cfg.MaxWaterfallSpans <= 0 {
		cfg.MaxWaterfallSpans = DefaultMaxWaterfallSpans
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dashboard{r: r, cfg: cfg, pages: map[string]*template.Template{}}
	layout := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	for _, p := range []string{"services", "logs", "traces", "trace", "metrics", "error"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, err
		}
		d.pages[p] = t
	}
	return d, nil
}

// MountOn registers the pages under cfg.Base with mount.
func (d *Dashboard) MountOn(mount func(pattern string, h http.Handler)) {
	b := d.cfg.Base
	static, _ := fs.Sub(staticFS, "static")
	mount("GET "+b+"/{$}", http.HandlerFunc(d.services))
	mount("GET "+b+"/logs", http.HandlerFunc(d.logs))
	mount("GET "+b+"/traces", http.HandlerFunc(d.traces))
	mount("GET "+b+"/traces/{trace_id}", http.HandlerFunc(d.trace))
	mount("GET "+b+"/metrics", http.HandlerFunc(d.metrics))
	mount("GET "+b+"/static/", http.StripPrefix(b+"/static/", http.FileServerFS(static)))
}

// page is what every template sees.
type page struct {
	Title   string
	Base    string
	APIBase string
	Logout  string // the logout form's action; "" hides the button
	Error   string
	F       map[string]string // echo of the query parameters for the forms
	data
}

type data struct {
	Services   []query.Service
	Page       query.LogPage
	Next       string
	StreamURL  string
	Severities []string
	Traces     []query.TraceSummary
	Tree       *query.TraceTree
	SVG        template.HTML
	Truncated  bool
	Shown      int
	Names      []query.MetricName
	Charts     []template.HTML
	Aggs       []query.Agg
}

func (d *Dashboard) newPage(r *http.Request, title string) *page {
	f := map[string]string{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			f[k] = v[0]
		}
	}
	p := &page{Title: title, Base: d.cfg.Base, APIBase: query.Prefix, F: f}
	if d.cfg.LogoutPath != "" && d.cfg.SessionCookie != "" {
		if _, err := r.Cookie(d.cfg.SessionCookie); err == nil {
			p.Logout = d.cfg.LogoutPath
		}
	}
	return p
}

// render executes a page into a buffer first, so a template error never
// leaves half a page behind a 200.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, name string, status int, p *page) {
	var buf bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		d.cfg.Logger.Error("render", "page", name, "err", err)
		http.Error(w, "render error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// Only our own script may run; telemetry is escaped anyway, this is the second wall.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// failPage renders err with the status query.StatusOf picks, keeping the
// page's form so the user can fix the parameter.
func (d *Dashboard) failPage(w http.ResponseWriter, r *http.Request, name string, p *page, err error) {
	if r.Context().Err() != nil {
		return
	}
	status := query.StatusOf(err)
	if status == http.StatusInternalServerError {
		d.cfg.Logger.Error("dashboard query", "path", r.URL.Path, "err", err)
		p.Error = "query failed; see the server log"
	} else {
		p.Error = err.Error()
	}
	d.render(w, r, name, status, p)
}

func (d *Dashboard) services(w http.ResponseWriter, r *http.Request) {
	p := d.newPage(r, "Services")
	s, err := d.r.Services(r.Context())
	if err != nil {
		d.failPage(w, r, "error", p, err)
		return
	}
	p.Services = s
	d.render(w, r, "services", http.StatusOK, p)
}

func (d *Dashboard) logs(w http.ResponseWriter, r *http.Request) {
	p := d.newPage(r, "Logs")
	p.Severities = []string{"trace", "debug", "info", "warn", "error", "fatal"}
	// The live tail takes the same filters except paging and time range.
	p.StreamURL = query.Prefix + "/logs/stream?" + query.TakenParams(r.URL.Query(), "/logs/stream").Encode()
	q, err := query.ParseLogQuery(r.URL.Query(), d.cfg.Now())
	if err != nil {
		d.failPage(w, r, "logs", p, err)
		return
	}
	pg, _, err := d.r.Logs(r.Context(), q)
	if err != nil {
		d.failPage(w, r, "logs", p, err)
		return
	}
	p.Page = pg
	if pg.NextCursor != "" {
		nv := r.URL.Query()
		nv.Set("cursor", pg.NextCursor)
		p.Next = d.cfg.Base + "/logs?" + nv.Encode()
	}
	d.render(w, r, "logs", http.StatusOK, p)
}

func (d *Dashboard) traces(w http.ResponseWriter, r *http.Request) {
	p := d.newPage(r, "Traces")
	q, err := query.ParseTraceQuery(r.URL.Query(), d.cfg.Now())
	if err != nil {
		d.failPage(w, r, "traces", p, err)
		return
	}
	t, err := d.r.Traces(r.Context(), q)
	if err != nil {
		d.failPage(w, r, "traces", p, err)
		return
	}
	p.Traces = t
	d.render(w, r, "traces", http.StatusOK, p)
}

func (d *Dashboard) trace(w http.ResponseWriter, r *http.Request) {
	p := d.newPage(r, "Trace")
	id, err := query.ParseTraceID(r.PathValue("trace_id"))
	if err != nil {
		d.failPage(w, r, "error", p, err)
		return
	}
	t, err := d.r.Trace(r.Context(), id)
	if err != nil {
		d.failPage(w, r, "error", p, err)
		return
	}
	p.Tree = t
	p.Shown = min(len(t.Spans), d.cfg.MaxWaterfallSpans)
	p.Truncated = p.Shown < len(t.Spans)
	p.SVG = Waterfall(t, d.cfg.MaxWaterfallSpans)
	d.render(w, r, "trace", http.StatusOK, p)
}

func (d *Dashboard) metrics(w http.ResponseWriter, r *http.Request) {
	p := d.newPage(r, "Metrics")
	p.Aggs = []query.Agg{query.AggAvg, query.AggSum, query.AggMin, query.AggMax, query.AggLast, query.AggCount, query.AggRate}
	names, err := d.r.MetricNames(r.Context(), r.URL.Query().Get("service"))
	if err != nil {
		d.failPage(w, r, "metrics", p, err)
		return
	}
	p.Names = names
	if p.F["name"] == "" {
		d.render(w, r, "metrics", http.StatusOK, p)
		return
	}
	q, err := query.ParseSeriesQuery(r.URL.Query(), d.cfg.Now())
	if err != nil {
		d.failPage(w, r, "metrics", p, err)
		return
	}
	res, err := d.r.Series(r.Context(), q)
	if err != nil {
		d.failPage(w, r, "metrics", p, err)
		return
	}
	p.Charts = charts(res)
	if len(p.Charts) == 0 {
		p.Error = "no data for metric " + q.Name
	}
	d.render(w, r, "metrics", http.StatusOK, p)
}

// charts turns a series result into SVG charts: one per series; histograms
// and summaries plot p50/p90/p99.
func charts(res *query.SeriesResult) []template.HTML {
	var out []template.HTML
	for _, s := range res.Series {
		title := res.Name + " · " + s.Service + " · " + s.Type
		if s.Unit != "" {
			title += " (" + s.Unit + ")"
		}
		times := make([]int64, len(s.Points))
		for i, pt := range s.Points {
			times[i] = pt.TimeUnixNano
		}
		pick := func(get func(query.SeriesPoint) *float64) []float64 {
			v := make([]float64, len(s.Points))
			for i, pt := range s.Points {
				v[i] = math.NaN()
				if p := get(pt); p != nil {
					v[i] = *p
				}
			}
			return v
		}
		var lines []Line
		switch s.Type {
		case "histogram", "exponential_histogram", "summary":
			lines = []Line{
				{Name: "p50", Times: times, Values: pick(func(p query.SeriesPoint) *float64 { return p.P50 })},
				{Name: "p90", Times: times, Values: pick(func(p query.SeriesPoint) *float64 { return p.P90 })},
				{Name: "p99", Times: times, Values: pick(func(p query.SeriesPoint) *float64 { return p.P99 })},
			}
		default:
			title += " · " + string(res.Agg)
			lines = []Line{{Name: string(res.Agg), Times: times, Values: pick(func(p query.SeriesPoint) *float64 { return p.Value })}}
		}
		out = append(out, Chart(title, res.SinceUnixNano, res.UntilUnixNano, lines))
	}
	return out
}
