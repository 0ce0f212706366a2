package query

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// getStatus GETs url and returns the status and the error body's param.
func getStatus(t *testing.T, url string) (int, errorBody) {
	t.Helper()
	resp, body := get(t, url)
	var eb errorBody
	if resp.StatusCode != http.StatusOK {
		_ = json.Unmarshal(body, &eb)
	}
	return resp.StatusCode, eb
}

func TestUnknownParameterRefused(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tc := range []struct{ path, param string }{
		{"/api/v1/logs?start=15m", "start"},
		{"/api/v1/logs?host.name=node-7", "host.name"},
		{"/api/v1/logs/stream?since=15m", "since"},
		{"/api/v1/traces?services=a", "services"},
		{"/api/v1/traces/0af7651916cd43dd8448eb211c80319c?service=a", "service"},
		{"/api/v1/metrics/names?name=x", "name"},
		{"/api/v1/metrics/series?name=x&step=1m&window=1h", "window"},
		{"/api/v1/services?service=a", "service"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			code, eb := getDocStatus(t, e.base+tc.path) // a stream accepted in error must not hang the test
			if code != http.StatusBadRequest || eb.Param != tc.param || !strings.Contains(eb.Error, "unknown parameter") {
				t.Errorf("got %d %+v, want 400 naming %q as unknown", code, eb, tc.param)
			}
		})
	}
}

func TestTimeParameters(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, query string
		since       int64
		until       int64
		bad         string // the parameter refused, or ""
	}{
		{"days", "since=30d", now.Add(-30 * 24 * time.Hour).UnixNano(), 0, ""},
		{"days and hours", "since=1d12h", now.Add(-36 * time.Hour).UnixNano(), 0, ""},
		{"decimal days", "since=-1.5d", now.Add(-36 * time.Hour).UnixNano(), 0, ""},
		{"since zero", "since=0", 0, 0, ""},
		{"until zero", "until=0", 0, -1, ""},
		{"unix ns", "since=5&until=7", 5, 7, ""},
		{"before 1678", "since=1600-01-01T00:00:00Z", 0, 0, "since"},
		{"after 2262", "until=2300-01-01T00:00:00Z", 0, 0, "until"},
		{"past int64", "until=99999999999999999999", 0, 0, "until"},
		{"too many days", "since=200000d", 0, 0, "since"},
		{"days before 1678", "since=150000d", 0, 0, "since"},
		{"negative unix ns", "since=-5", 0, 0, "since"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			q, err := ParseLogQuery(v, now)
			if tt.bad != "" {
				pe, ok := err.(*ParamError)
				if !ok || pe.Param != tt.bad {
					t.Fatalf("got %v, want a ParamError on %s", err, tt.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.Since != tt.since || q.Until != tt.until {
				t.Errorf("got since %d until %d, want %d %d", q.Since, q.Until, tt.since, tt.until)
			}
		})
	}
	v, _ := url.ParseQuery("name=m&since=1678-01-01T00:00:00Z&until=2262-01-01T00:00:00Z")
	if _, err := ParseSeriesQuery(v, now); err == nil {
		t.Error("series over 584 years: got no error, want a ParamError")
	}
	v, _ = url.ParseQuery("name=m&since=0&until=1000000000000")
	if q, err := ParseSeriesQuery(v, now); err != nil || q.Since != 0 {
		t.Errorf("series since=0: got since %d, %v; want 0, nil", q.Since, err)
	}
}

// TestSinceZeroAndUntilZero: since=0 returns everything, until=0 nothing.
func TestSinceZeroAndUntilZero(t *testing.T) {
	e := newEnv(t, Config{})
	seedLogs(t, e, time.Now().Add(-time.Hour))
	var p LogPage
	getJSON(t, e.base+"/api/v1/logs?since=0&limit=1000", http.StatusOK, &p)
	if len(p.Logs) != 30 {
		t.Errorf("since=0: got %d logs, want 30", len(p.Logs))
	}
	getJSON(t, e.base+"/api/v1/logs?until=0", http.StatusOK, &p)
	if len(p.Logs) != 0 {
		t.Errorf("until=0: got %d logs, want 0", len(p.Logs))
	}
}

// TestServiceNotUTF8 lists a service whose name is not valid UTF-8 and
// filters by the name as listed.
func TestServiceNotUTF8(t *testing.T) {
	e := newEnv(t, Config{})
	bad := "caf\xe9-\xff\xfe"
	now := time.Now()
	e.appendLogs(t, logSpec{Service: bad, Sev: 9, Body: "from the odd one", At: now},
		logSpec{Service: "plain", Sev: 9, Body: "from plain", At: now})
	e.appendSpans(t, spanSpec{Service: bad, TraceID: traceA, SpanID: "00f067aa0ba902b7", Name: "root", Start: now, End: now.Add(time.Second)})
	e.waitProjected(t)
	var s struct{ Services []Service }
	getJSON(t, e.base+"/api/v1/services", http.StatusOK, &s)
	var listed string
	for _, svc := range s.Services {
		if strings.HasPrefix(svc.Name, "caf") {
			listed = svc.Name
		}
	}
	if want := "caf\uFFFD-\uFFFD\uFFFD"; listed != want {
		t.Fatalf("listed %q, want %q", listed, want)
	}
	var p LogPage
	getJSON(t, e.base+"/api/v1/logs?service="+url.QueryEscape(listed), http.StatusOK, &p)
	if got := bodies(p); len(got) != 1 || got[0] != "from the odd one" {
		t.Errorf("logs by the listed name: got %q, want [from the odd one]", got)
	}
	var tr struct{ Traces []TraceSummary }
	getJSON(t, e.base+"/api/v1/traces?service="+url.QueryEscape(listed), http.StatusOK, &tr)
	if len(tr.Traces) != 1 {
		t.Errorf("traces by the listed name: got %d, want 1", len(tr.Traces))
	}
	if !(LogFilter{Service: listed}).Matcher()(&Log{Service: bad}) {
		t.Error("live tail filter by the listed name does not match the stored name")
	}
}

func TestAttributeFiltersAndResource(t *testing.T) {
	e := newEnv(t, Config{})
	now := time.Now().Add(-time.Minute)
	e.appendLogs(t,
		logSpec{Service: "shop", Sev: 9, Body: "cart on 7", At: now, Resource: map[string]any{"host.name": "node-7", "k8s.pod.name": "shop-1"},
			Attrs: map[string]any{"http.route": "/cart", "http.status_code": 200}},
		logSpec{Service: "shop", Sev: 9, Body: "cart on 8", At: now.Add(time.Millisecond), Resource: map[string]any{"host.name": "node-8"},
			Attrs: map[string]any{"http.route": "/cart", "http.status_code": 500}},
		logSpec{Service: "shop", Sev: 9, Body: "home on 7", At: now.Add(2 * time.Millisecond), Resource: map[string]any{"host.name": "node-7"},
			Attrs: map[string]any{"http.route": "/"}},
	)
	e.appendSpans(t,
		spanSpec{Service: "shop", TraceID: traceA, SpanID: "00f067aa0ba902b7", Name: "GET /cart", Start: now, End: now.Add(time.Second),
			Resource: map[string]any{"host.name": "node-7"}, Attrs: map[string]any{"http.route": "/cart"}},
		spanSpec{Service: "shop", TraceID: "1af7651916cd43dd8448eb211c80319c", SpanID: "10f067aa0ba902b7", Name: "GET /", Start: now, End: now.Add(time.Second),
			Resource: map[string]any{"host.name": "node-8"}, Attrs: map[string]any{"http.route": "/"}},
	)
	e.waitProjected(t)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"attr.http.route=/cart", []string{"cart on 8", "cart on 7"}},
		{"resource.host.name=node-7", []string{"home on 7", "cart on 7"}},
		{"resource.host.name=node-7&attr.http.route=/cart", []string{"cart on 7"}},
		{"attr.http.status_code=500", []string{"cart on 8"}},
		{"attr.http.route=/cart&q=cart", []string{"cart on 8", "cart on 7"}},
		{"resource.host.name=node-9", nil},
		{"attr.missing=x", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var p LogPage
			getJSON(t, e.base+"/api/v1/logs?"+tc.query, http.StatusOK, &p)
			if got := bodies(p); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	var p LogPage
	getJSON(t, e.base+"/api/v1/logs?attr.http.route=/cart&resource.host.name=node-7", http.StatusOK, &p)
	if len(p.Logs) != 1 {
		t.Fatalf("got %d logs, want 1", len(p.Logs))
	}
	var res map[string]string
	if err := json.Unmarshal(p.Logs[0].Resource, &res); err != nil || res["host.name"] != "node-7" || res["k8s.pod.name"] != "shop-1" {
		t.Errorf("log resource: got %s, want host.name node-7 and k8s.pod.name shop-1", p.Logs[0].Resource)
	}
	if !(LogFilter{Attrs: []AttrFilter{{Key: "http.status_code", Value: "200"}, {Resource: true, Key: "host.name", Value: "node-7"}}}).Matcher()(&p.Logs[0]) {
		t.Error("live tail matcher disagrees with the SQL filter")
	}
	var tr struct{ Traces []TraceSummary }
	getJSON(t, e.base+"/api/v1/traces?resource.host.name=node-7&attr.http.route=/cart", http.StatusOK, &tr)
	if len(tr.Traces) != 1 || tr.Traces[0].TraceID != traceA || !strings.Contains(string(tr.Traces[0].Resource), `"host.name":"node-7"`) {
		t.Errorf("traces by attributes: got %+v, want trace %s with its resource", tr.Traces, traceA)
	}
	code, eb := getStatus(t, e.base+"/api/v1/logs?attr.=x")
	if code != http.StatusBadRequest || eb.Param != "attr." {
		t.Errorf("empty key: got %d %+v, want 400 on attr.", code, eb)
	}
}

func TestSeriesAttributeFilters(t *testing.T) {
	e := newEnv(t, Config{})
	since := time.Now().Add(-10 * time.Minute).Truncate(time.Minute)
	md := pmetric.NewMetrics()
	for _, host := range []string{"node-7", "node-8"} {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "api")
		rm.Resource().Attributes().PutStr("host.name", host)
		rm.Resource().Attributes().PutStr("k8s.pod.name", "api-"+host)
		g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		g.SetName("temperature")
		g.SetEmptyGauge()
		for _, route := range []string{"/cart", "/"} {
			dp := g.Gauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(since.Add(time.Minute)))
			dp.Attributes().PutStr("http.route", route)
			v := 10.0
			if host == "node-8" {
				v = 100
			}
			if route == "/" {
				v++
			}
			dp.SetDoubleValue(v)
		}
	}
	e.appendMetrics(t, md)
	e.waitProjected(t)
	base := e.base + "/api/v1/metrics/series?name=temperature&agg=sum&step=1h&since=" + url.QueryEscape(since.Format(time.RFC3339))
	for _, tc := range []struct {
		filter string
		want   float64
		hosts  string // the series' resources: host.name/k8s.pod.name of each
	}{
		{"", 10 + 11 + 100 + 101, "node-7/api-node-7 node-8/api-node-8"},
		{"&resource.host.name=node-7", 10 + 11, "node-7/api-node-7"},
		{"&attr.http.route=/cart", 10 + 100, "node-7/api-node-7 node-8/api-node-8"},
		{"&resource.host.name=node-8&attr.http.route=/", 101, "node-8/api-node-8"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			var res SeriesResult
			getJSON(t, base+tc.filter, http.StatusOK, &res)
			if len(res.Series) != 1 || len(res.Series[0].Points) != 1 || res.Series[0].Points[0].Value == nil {
				t.Fatalf("got %+v, want one series of one point", res)
			}
			if got := *res.Series[0].Points[0].Value; got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			var hosts []string
			for _, r := range res.Series[0].Resources {
				var m map[string]string
				if err := json.Unmarshal([]byte(r), &m); err != nil || m["service.name"] != "api" {
					t.Errorf("series resource %s: %v, want service.name api", r, err)
				}
				hosts = append(hosts, m["host.name"]+"/"+m["k8s.pod.name"])
			}
			if got := strings.Join(hosts, " "); got != tc.hosts {
				t.Errorf("series resources: got %q, want %q", got, tc.hosts)
			}
		})
	}
}
