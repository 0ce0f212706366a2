package query

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// docParam is one row of a parameter table in docs/api.md.
type docParam struct {
	name    string // service, or attr.<key>
	example string // name=value, sent as the query
}

// readAPIDoc parses docs/api.md: each "## GET /api/v1<route>" heading and
// the rows of the parameter table under it (first cell the parameter, last
// cell an example, both in backticks).
func readAPIDoc(t *testing.T) map[string][]docParam {
	t.Helper()
	f, err := os.Open("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := map[string][]docParam{}
	route := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if r, ok := strings.CutPrefix(line, "## GET "+Prefix); ok {
			route = r
			doc[route] = []docParam{}
			continue
		}
		if strings.HasPrefix(line, "## ") {
			route = ""
			continue
		}
		if route == "" || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		unquote := func(s string) string { return strings.Trim(strings.TrimSpace(s), "`") }
		doc[route] = append(doc[route], docParam{name: unquote(cells[0]), example: unquote(cells[len(cells)-1])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestAPIDocMatchesHandlers holds docs/api.md to the handlers: every route
// is documented, every documented parameter is accepted with its example,
// and a parameter the doc does not list is refused.
func TestAPIDocMatchesHandlers(t *testing.T) {
	doc := readAPIDoc(t)
	e := newEnv(t, Config{})
	var mounted []string
	e.api.MountOn(func(pattern string, _ http.Handler) {
		mounted = append(mounted, strings.TrimPrefix(pattern, "GET "+Prefix))
	})
	for _, route := range mounted {
		if _, ok := doc[route]; !ok {
			t.Errorf("route %s is not documented in docs/api.md", route)
		}
		if _, ok := endpointParams[route]; !ok {
			t.Errorf("route %s has no entry in endpointParams", route)
		}
	}
	for route := range endpointParams {
		if _, ok := doc[route]; !ok {
			t.Errorf("endpointParams has %s, which docs/api.md does not document", route)
		}
	}
	now := time.Now().Add(-time.Minute)
	e.appendSpans(t, spanSpec{Service: "checkout", TraceID: traceA, SpanID: "b7ad6b7169203331", Name: "GET /cart", Start: now, End: now.Add(time.Second)})
	e.waitProjected(t)
	for route, params := range doc {
		ps, ok := endpointParams[route]
		if !ok {
			t.Errorf("docs/api.md documents %s, which has no entry in endpointParams", route)
			continue
		}
		var names []string
		attrs := false
		for _, p := range params {
			if p.name == AttrPrefix+"<key>" || p.name == ResourcePrefix+"<key>" {
				attrs = true
				continue
			}
			names = append(names, p.name)
		}
		if !sameSet(names, ps.names) || attrs != ps.attrs {
			t.Errorf("%s: documented %v (attribute filters %v), handler takes %v (attribute filters %v)", route, names, attrs, ps.names, ps.attrs)
		}
		if route == StatsRoute {
			continue // the ingest server serves it; TestStatsRefusesUnknownParams sends the requests
		}
		path := e.base + Prefix + strings.ReplaceAll(route, "{trace_id}", traceA)
		required := ""
		if route == "/metrics/series" {
			required = "name=http.server.duration&"
		}
		for _, p := range params {
			t.Run(route+"?"+p.example, func(t *testing.T) {
				q := required + p.example
				if p.name == "name" {
					q = p.example
				}
				if code, eb := getDocStatus(t, path+"?"+q); code != http.StatusOK {
					t.Errorf("documented example: got %d %+v, want 200", code, eb)
				}
			})
		}
		t.Run(route+"?undocumented", func(t *testing.T) {
			code, eb := getDocStatus(t, path+"?"+required+"undocumented=1")
			if code != http.StatusBadRequest || eb.Param != "undocumented" {
				t.Errorf("undocumented parameter: got %d %+v, want 400 naming it", code, eb)
			}
		})
	}
}

// getDocStatus is getStatus that also ends a live tail once its headers
// arrive.
func getDocStatus(t *testing.T, url string) (int, errorBody) {
	t.Helper()
	if !strings.Contains(url, "/logs/stream") {
		return getStatus(t, url)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, errorBody{}
	}
	cancel()
	return getStatus(t, url)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
