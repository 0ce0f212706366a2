package query

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/plog"
)

// get GETs url and returns the response (body closed) and its body.
func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp, body
}

func getJSON(t *testing.T, url string, wantStatus int, v any) {
	t.Helper()
	resp, body := get(t, url)
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s: got status %d, want %d: %s", url, resp.StatusCode, wantStatus, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET %s: content type %q", url, ct)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", url, body, err)
	}
}

const traceA = "0af7651916cd43dd8448eb211c80319c"

func seedLogs(t *testing.T, e *testEnv, base time.Time) {
	t.Helper()
	var logs []logSpec
	for i := range 30 {
		l := logSpec{Service: "alpha", Sev: plog.SeverityNumberInfo, Body: fmt.Sprintf("request %02d served", i), At: base.Add(time.Duration(i) * time.Second)}
		if i%3 == 0 {
			l.Service = "beta"
		}
		if i%5 == 0 {
			l.Sev = plog.SeverityNumberError
			l.Body = fmt.Sprintf("request %02d failed: Upstream TIMEOUT", i)
		}
		if i == 17 {
			l.TraceID = traceA
		}
		logs = append(logs, l)
	}
	e.appendLogs(t, logs[:15]...)
	e.appendLogs(t, logs[15:]...)
	e.waitProjected(t)
}

func bodies(p LogPage) []string {
	var out []string
	for _, l := range p.Logs {
		out = append(out, l.Body)
	}
	return out
}

func TestLogsFilters(t *testing.T) {
	e := newEnv(t, Config{})
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	seedLogs(t, e, base)
	for _, tc := range []struct {
		name  string
		query string
		want  []string
	}{
		{"limit newest first", "limit=3", []string{"request 29 served", "request 28 served", "request 27 served"}},
		{"service", "service=beta&limit=3", []string{"request 27 served", "request 24 served", "request 21 served"}},
		{"severity", "severity_min=error", []string{"request 25 failed: Upstream TIMEOUT", "request 20 failed: Upstream TIMEOUT",
			"request 15 failed: Upstream TIMEOUT", "request 10 failed: Upstream TIMEOUT", "request 05 failed: Upstream TIMEOUT", "request 00 failed: Upstream TIMEOUT"}},
		{"substring case-insensitive", "q=timeout&service=beta", []string{"request 15 failed: Upstream TIMEOUT", "request 00 failed: Upstream TIMEOUT"}},
		{"substring no match", "q=zebra", nil},
		{"glob case-sensitive", "glob=*TIMEOUT&limit=2", []string{"request 25 failed: Upstream TIMEOUT", "request 20 failed: Upstream TIMEOUT"}},
		{"glob lower does not match", "glob=*timeout*", nil},
		{"glob with wildcards", "glob=" + url.QueryEscape("request 1?*") + "&severity_min=17", []string{"request 15 failed: Upstream TIMEOUT", "request 10 failed: Upstream TIMEOUT"}},
		{"trace id", "trace_id=" + traceA, []string{"request 17 served"}},
		{"since until", "since=" + url.QueryEscape(base.Add(3*time.Second).Format(time.RFC3339Nano)) +
			"&until=" + url.QueryEscape(base.Add(5*time.Second).Format(time.RFC3339Nano)), []string{"request 04 served", "request 03 served"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p LogPage
			getJSON(t, e.base+"/api/v1/logs?"+tc.query, http.StatusOK, &p)
			if diff := cmp.Diff(tc.want, bodies(p)); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLogsPagination(t *testing.T) {
	e := newEnv(t, Config{})
	seedLogs(t, e, time.Now().Add(-time.Hour))
	for _, filter := range []string{"", "&q=request", "&glob=request*"} {
		t.Run("filter"+filter, func(t *testing.T) {
			var all []Log
			next := ""
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("too many pages")
				}
				var p LogPage
				getJSON(t, e.base+"/api/v1/logs?limit=7"+filter+"&cursor="+next, http.StatusOK, &p)
				all = append(all, p.Logs...)
				if p.NextCursor == "" {
					break
				}
				next = p.NextCursor
			}
			if len(all) != 30 {
				t.Fatalf("got %d logs over all pages, want 30", len(all))
			}
			for i := 1; i < len(all); i++ {
				if all[i].TimeUnixNano > all[i-1].TimeUnixNano {
					t.Errorf("not newest first at %d: %d after %d", i, all[i].TimeUnixNano, all[i-1].TimeUnixNano)
				}
			}
			ids := map[int64]bool{}
			for _, l := range all {
				if ids[l.ID] {
					t.Errorf("duplicate id %d", l.ID)
				}
				ids[l.ID] = true
			}
			if all[0].Service == "" || all[0].Attributes == nil {
				t.Errorf("record not filled: %+v", all[0])
			}
		})
	}
}

func TestBadParameters(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tc := range []struct{ path, param string }{
		{"/api/v1/logs?limit=0", "limit"},
		{"/api/v1/logs?limit=5000", "limit"},
		{"/api/v1/logs?limit=abc", "limit"},
		{"/api/v1/logs?severity_min=loud", "severity_min"},
		{"/api/v1/logs?q=ab", "q"},
		{"/api/v1/logs?trace_id=xyz", "trace_id"},
		{"/api/v1/logs?trace_id=00000000000000000000000000000000", "trace_id"},
		{"/api/v1/logs?since=yesterday", "since"},
		{"/api/v1/logs?since=1h&until=2h", "since"},
		{"/api/v1/logs?cursor=!!!", "cursor"},
		{"/api/v1/logs/stream?q=x", "q"},
		{"/api/v1/traces?min_duration=fast", "min_duration"},
		{"/api/v1/traces?error=maybe", "error"},
		{"/api/v1/traces/not-hex", "trace_id"},
		{"/api/v1/metrics/series", "name"},
		{"/api/v1/metrics/series?name=x&step=1ns", "step"},
		{"/api/v1/metrics/series?name=x&agg=median", "agg"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			var body errorBody
			getJSON(t, e.base+tc.path, http.StatusBadRequest, &body)
			if body.Param != tc.param || body.Error == "" {
				t.Errorf("got %+v, want param %q and a message", body, tc.param)
			}
		})
	}
	var body errorBody
	getJSON(t, e.base+"/api/v1/traces/"+traceA, http.StatusNotFound, &body)
	if !strings.Contains(body.Error, "not found") {
		t.Errorf("404 body: %+v", body)
	}
}

func TestTracesAPI(t *testing.T) {
	e := newEnv(t, Config{})
	t0 := time.Now().Add(-time.Minute)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	const traceB = "11111111111111111111111111111111"
	e.appendSpans(t,
		spanSpec{Service: "front", TraceID: traceA, SpanID: "0000000000000001", Name: "GET /", Start: ms(0), End: ms(100)},
		spanSpec{Service: "cart", TraceID: traceA, SpanID: "0000000000000003", ParentID: "0000000000000001", Name: "late: child; é 1:x", Start: ms(50), End: ms(90)},
		spanSpec{Service: "cart", TraceID: traceA, SpanID: "0000000000000002", ParentID: "0000000000000001", Name: "early child", Start: ms(10), End: ms(40)},
		spanSpec{Service: "db", TraceID: traceA, SpanID: "0000000000000004", ParentID: "0000000000000002", Name: "query", Start: ms(12), End: ms(30), Err: true},
		spanSpec{Service: "db", TraceID: traceA, SpanID: "0000000000000005", ParentID: "00000000000000ff", Name: "orphan", Start: ms(20), End: ms(120)},
	)
	e.appendSpans(t, spanSpec{Service: "front", TraceID: traceB, SpanID: "0000000000000009", Name: "GET /health", Start: ms(200), End: ms(201)})
	e.waitProjected(t)

	var tree TraceTree
	getJSON(t, e.base+"/api/v1/traces/"+traceA, http.StatusOK, &tree)
	raw, err := http.Get(e.base + "/api/v1/traces/" + traceA)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(raw.Body)
	raw.Body.Close()
	if n := strings.Count(string(body), `"spans":`); n != 1 || !json.Valid(body) {
		t.Errorf("streamed trace JSON: %d spans keys, valid %v", n, json.Valid(body))
	}
	type row struct {
		Name   string
		Depth  int
		Parent int
	}
	var got []row
	for _, s := range tree.Spans {
		got = append(got, row{s.Name, s.Depth, s.Parent})
	}
	want := []row{{"GET /", 0, -1}, {"early child", 1, 0}, {"query", 2, 1}, {"late: child; é 1:x", 1, 0}, {"orphan", 0, -1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if !tree.Error || tree.SpanCount != 5 || tree.Orphans != 1 || !slices.Equal(tree.Services, []string{"cart", "db", "front"}) {
		t.Errorf("tree summary: error=%v spans=%d orphans=%d services=%v", tree.Error, tree.SpanCount, tree.Orphans, tree.Services)
	}
	if tree.DurationNano != int64(120*time.Millisecond) {
		t.Errorf("duration: got %d, want %d", tree.DurationNano, 120*time.Millisecond)
	}

	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"all newest first", "", []string{traceB, traceA}},
		{"errors", "error=true", []string{traceA}},
		{"no errors", "error=false", []string{traceB}},
		{"min duration", "min_duration=50ms", []string{traceA}},
		{"service", "service=front&limit=1", []string{traceB}},
		{"since", "since=" + url.QueryEscape(ms(150).Format(time.RFC3339Nano)), []string{traceB}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res struct{ Traces []TraceSummary }
			getJSON(t, e.base+"/api/v1/traces?"+tc.query, http.StatusOK, &res)
			var ids []string
			for _, s := range res.Traces {
				ids = append(ids, s.TraceID)
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("trace ids (-want +got):\n%s", diff)
			}
			for _, s := range res.Traces {
				if s.TraceID == traceA && (s.SpanCount != 5 || !s.Error || s.RootName != "GET /" || s.DurationNano != int64(120*time.Millisecond)) {
					t.Errorf("summary of A: %+v", s)
				}
			}
		})
	}
}

func TestServicesAPI(t *testing.T) {
	e := newEnv(t, Config{})
	seedLogs(t, e, time.Now().Add(-time.Hour))
	var res struct{ Services []Service }
	getJSON(t, e.base+"/api/v1/services", http.StatusOK, &res)
	got := map[string]int64{}
	for _, s := range res.Services {
		got[s.Name] = s.Logs.Records
		if s.Logs.LastSeenUnixNano == 0 {
			t.Errorf("%s: no last seen", s.Name)
		}
	}
	if diff := cmp.Diff(map[string]int64{"alpha": 20, "beta": 10}, got); diff != "" {
		t.Errorf("log counts (-want +got):\n%s", diff)
	}
}

// sseReader reads Server-Sent Events frames.
type sseReader struct{ r *bufio.Reader }

// next returns the next frame's event name and data ("" event for comments).
func (s *sseReader) next() (event, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if event != "" || data != "" {
				return event, data, nil
			}
		case strings.HasPrefix(line, ":"):
			if event == "" && data == "" {
				return "", strings.TrimSpace(line[1:]), nil
			}
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

func openStream(t *testing.T, url string) (*http.Response, *sseReader) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := &sseReader{bufio.NewReader(resp.Body)}
	if ev, data, err := r.next(); err != nil || ev != "" || data != "subscribed" {
		t.Fatalf("first frame: %q %q %v, want the subscribed comment", ev, data, err)
	}
	return resp, r
}

func TestLogStreamDeliversNewMatchingLog(t *testing.T) {
	e := newEnv(t, Config{})
	seedLogs(t, e, time.Now().Add(-time.Hour)) // history must not be replayed
	_, r := openStream(t, e.base+"/api/v1/logs/stream?service=alpha&q=needle")
	e.appendLogs(t,
		logSpec{Service: "beta", Sev: 9, Body: "needle in the wrong service", At: time.Now()},
		logSpec{Service: "alpha", Sev: 9, Body: "hay only", At: time.Now()},
		logSpec{Service: "alpha", Sev: 9, Body: "a NEEDLE <script>alert(1)</script>", At: time.Now()},
	)
	for {
		ev, data, err := r.next()
		if err != nil {
			t.Fatalf("read stream: %v", err)
		}
		if ev == "" { // keepalive
			continue
		}
		if ev != "log" {
			t.Fatalf("event %q, want log", ev)
		}
		var l Log
		if err := json.Unmarshal([]byte(data), &l); err != nil {
			t.Fatal(err)
		}
		if l.Body != "a NEEDLE <script>alert(1)</script>" || l.Service != "alpha" {
			t.Errorf("got %+v, want the matching alpha needle", l)
		}
		return
	}
}

// smallReadClient dials with a tiny kernel receive buffer.
func smallReadClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: smallRecvDialer().DialContext}}
}

func TestLogStreamSlowClientDropped(t *testing.T) {
	e := newEnvListener(t, Config{Tail: TailConfig{Buffer: 8, Batch: 64}, SSEWriteTimeout: time.Minute},
		func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	// The slow client subscribes and then never reads: the tiny socket
	// buffers fill, the handler's write blocks, its 8-record buffer fills,
	// and the tailer drops it. A fast client keeps receiving, and ingest and
	// projection finish regardless.
	slowClient := smallReadClient()
	defer slowClient.CloseIdleConnections()
	resp, err := slowClient.Get(e.base + "/api/v1/logs/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	slow := &sseReader{bufio.NewReaderSize(resp.Body, 16)}
	if ev, data, err := slow.next(); err != nil || data != "subscribed" {
		t.Fatalf("slow first frame: %q %q %v", ev, data, err)
	}
	_, fast := openStream(t, e.base+"/api/v1/logs/stream?q=marker")
	const batches, per = 4, 250
	for b := range batches {
		logs := make([]logSpec, per)
		for i := range logs {
			logs[i] = logSpec{Service: "s", Sev: 9, Body: fmt.Sprintf("record %d-%d %s", b, i, strings.Repeat("ab", 40)), At: time.Now()}
		}
		e.appendLogs(t, logs...)
	}
	e.appendLogs(t, logSpec{Service: "s", Sev: 9, Body: "the marker", At: time.Now()})
	e.waitProjected(t)
	for {
		ev, data, err := fast.next()
		if err != nil {
			t.Fatalf("fast client: %v", err)
		}
		if ev == "log" && strings.Contains(data, "the marker") {
			break
		}
	}
	if n := e.api.Tailer().Subscribers(); n != 1 {
		t.Errorf("subscribers after the burst: got %d, want 1 (the fast one)", n)
	}
	// Now read the slow client to its end: what it got, then "dropped".
	body, err := io.ReadAll(slow.r)
	if err != nil {
		t.Fatalf("read slow stream: %v", err)
	}
	if !strings.HasSuffix(string(body), droppedEvent) {
		t.Errorf("slow stream does not end with the dropped event; last bytes %q", body[max(0, len(body)-120):])
	}
	if n := strings.Count(string(body), "event: log"); n >= batches*per {
		t.Errorf("slow client got %d records; want it dropped before all %d", n, batches*per)
	}
}

func TestLogsSubstringSpecialCharacters(t *testing.T) {
	e := newEnv(t, Config{})
	now := time.Now()
	texts := []string{`50% off_sale today`, `say "quoted" words`, `Ünïcödé ÇASE text`, `5000 offXsale`, `a b c d`,
		"disk\tfull on\n/dev/sda1 (retry retry)"}
	var logs []logSpec
	for i, b := range texts {
		logs = append(logs, logSpec{Service: "s", Sev: 9, Body: b, At: now.Add(time.Duration(i) * time.Millisecond)})
	}
	e.appendLogs(t, logs...)
	e.waitProjected(t)
	for _, tc := range []struct{ q, want string }{
		{`0% off_s`, `50% off_sale today`}, // % and _ are literal, not LIKE wildcards
		{`"quoted"`, `say "quoted" words`},
		{`ünïcödé`, `Ünïcödé ÇASE text`},
		{`b c`, `a b c d`},
		// A term of several words matches where a body holds it with its exact whitespace.
		{`ff_sale tod`, `50% off_sale today`},
		{"disk\tfull on\n/dev", "disk\tfull on\n/dev/sda1 (retry retry)"},
		{`disk full`, ``}, // a tab in the body
		{`today 50%`, ``}, // its words, out of order
		{`(retry retry)`, "disk\tfull on\n/dev/sda1 (retry retry)"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			var p LogPage
			getJSON(t, e.base+"/api/v1/logs?q="+url.QueryEscape(tc.q), http.StatusOK, &p)
			if got := bodies(p); tc.want == "" && len(got) != 0 {
				t.Errorf("q=%q: got %q, want none", tc.q, got)
			} else if tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("q=%q: got %q, want [%q]", tc.q, got, tc.want)
			}
		})
	}
}
