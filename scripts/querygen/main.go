// Command querygen loads a running `otelbench serve` with the query
// benchmark's data set through the OTLP/HTTP ingest API, then measures the
// query API against it.
//
//	querygen load    -endpoint http://127.0.0.1:4318 -logs 3200000 -trace-spans 161000
//	querygen measure -endpoint http://127.0.0.1:4318 -n 30 -pid $(pgrep ...)
//
// The data set: logs spread over the last hour, bodies from a small
// vocabulary; the word "timeout" appears in 1 of 20 bodies (the common term,
// 160,000 of 3.2M) and "quokka" in 1 of 6,400 (the selective term, 500);
// one trace of -trace-spans spans in a tree of fan-out 8 across 12 services.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/sync/errgroup"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: querygen load|measure [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "load":
		err = runLoad(ctx, os.Args[2:])
	case "measure":
		err = runMeasure(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q (want load or measure)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "querygen:", err)
		os.Exit(1)
	}
}

// TraceID is the benchmark trace's id.
const TraceID = "5175657279747261636531363130303f"

var words = []string{"GET", "POST", "PUT", "user", "cart", "order", "checkout", "payment", "session", "cache", "hit", "miss",
	"db", "query", "rows", "latency", "ok", "accepted", "retry", "queued", "shipped", "stock", "price", "render"}

func logBody(i int, rng *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "req=%08x ", rng.Uint32())
	for range 6 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	if i%20 == 7 {
		b.WriteString("upstream timeout after 3000ms ")
	}
	if i%6400 == 3 {
		b.WriteString("quokka sighting ")
	}
	fmt.Fprintf(&b, "status=%d dur=%dms", 200+100*rng.IntN(4), rng.IntN(900))
	return b.String()
}

func runLoad(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	endpoint := fs.String("endpoint", "http://127.0.0.1:4318", "otelbench serve base URL")
	nLogs := fs.Int("logs", 3_200_000, "log records to send")
	perReq := fs.Int("per-request", 1000, "records per request")
	spans := fs.Int("trace-spans", 161_000, "spans of the one big trace (0: none)")
	conc := fs.Int("concurrency", 4, "requests in flight")
	token := fs.String("token", os.Getenv("OTELBENCH_AUTH_TOKEN"), "bearer token, if ingest needs one")
	_ = fs.Parse(args)
	client := &http.Client{Timeout: 60 * time.Second}
	start := time.Now()
	var sent atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*conc)
	now := time.Now()
	base := now.Add(-time.Hour)
	step := time.Hour / time.Duration(max(*nLogs, 1))
	for first := 0; first < *nLogs && gctx.Err() == nil; first += *perReq {
		n := min(*perReq, *nLogs-first)
		g.Go(func() error {
			body, err := buildLogs(first, n, base, step)
			if err != nil {
				return err
			}
			if err := post(gctx, client, *endpoint+"/v1/logs", *token, body); err != nil {
				return err
			}
			if s := sent.Add(int64(n)); s/200_000 != (s-int64(n))/200_000 {
				fmt.Fprintf(os.Stderr, "logs sent: %d (%.0f/s)\n", s, float64(s)/time.Since(start).Seconds())
			}
			return nil
		})
	}
	if *spans > 0 {
		tr := buildTrace(*spans, now.Add(-30*time.Minute))
		for first := 0; first < len(tr); first += *perReq {
			chunk := tr[first:min(first+*perReq, len(tr))]
			g.Go(func() error {
				body, err := encodeSpans(chunk)
				if err != nil {
					return err
				}
				return post(gctx, client, *endpoint+"/v1/traces", *token, body)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Printf("loaded %d logs and a %d-span trace (%s) in %.1fs\n", *nLogs, *spans, TraceID, time.Since(start).Seconds())
	return nil
}

func post(ctx context.Context, c *http.Client, url, token string, body []byte) error {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("post %s: %w", url, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case (resp.StatusCode == 503 || resp.StatusCode == 429) && attempt < 100:
			time.Sleep(50 * time.Millisecond * time.Duration(min(attempt+1, 20)))
		default:
			return fmt.Errorf("post %s: status %d", url, resp.StatusCode)
		}
	}
}

var services = []string{"frontend", "cart", "checkout", "payment", "catalog", "search", "auth", "shipping", "email", "ads", "recommend", "inventory"}

func buildLogs(first, n int, base time.Time, step time.Duration) ([]byte, error) {
	rng := rand.New(rand.NewPCG(uint64(first), 1))
	ld := plog.NewLogs()
	// one resource per service, records round-robin
	recs := make([]plog.LogRecordSlice, 4)
	for s := range recs {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", services[s])
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("querygen")
		recs[s] = sl.LogRecords()
	}
	for i := first; i < first+n; i++ {
		lr := recs[i%len(recs)].AppendEmpty()
		ts := base.Add(time.Duration(i) * step)
		lr.SetTimestamp(pcommon.NewTimestampFromTime(ts))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(ts))
		sev := plog.SeverityNumberInfo
		if i%20 == 7 {
			sev = plog.SeverityNumberError
		}
		lr.SetSeverityNumber(sev)
		lr.SetSeverityText(sev.String())
		lr.Body().SetStr(logBody(i, rng))
		lr.Attributes().PutInt("i", int64(i))
	}
	var m plog.ProtoMarshaler
	return m.MarshalLogs(ld)
}

type genSpan struct {
	id, parent uint64
	service    int
	name       string
	start, end time.Time
	err        bool
}

// buildTrace makes n spans in a tree of fan-out 8, children inside their
// parent's time window.
func buildTrace(n int, start time.Time) []genSpan {
	rng := rand.New(rand.NewPCG(42, 7))
	out := make([]genSpan, 0, n)
	out = append(out, genSpan{id: 1, service: 0, name: "GET /checkout", start: start, end: start.Add(20 * time.Second)})
	for i := 1; i < n; i++ {
		p := out[(i-1)/8]
		win := p.end.Sub(p.start)
		off := time.Duration(rng.Int64N(int64(win)/2 + 1))
		d := time.Duration(rng.Int64N(int64(win-off)/2+1)) + time.Microsecond
		out = append(out, genSpan{id: uint64(i + 1), parent: p.id, service: rng.IntN(len(services)),
			name: words[rng.IntN(len(words))] + " " + strconv.Itoa(i%97), start: p.start.Add(off), end: p.start.Add(off + d),
			err: rng.IntN(500) == 0})
	}
	return out
}

func encodeSpans(spans []genSpan) ([]byte, error) {
	td := ptrace.NewTraces()
	byService := map[int]ptrace.SpanSlice{}
	var tid pcommon.TraceID
	if _, err := hex.Decode(tid[:], []byte(TraceID)); err != nil {
		return nil, fmt.Errorf("decode trace id: %w", err)
	}
	for _, s := range spans {
		ss, ok := byService[s.service]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", services[s.service])
			sc := rs.ScopeSpans().AppendEmpty()
			sc.Scope().SetName("querygen")
			ss = sc.Spans()
			byService[s.service] = ss
		}
		sp := ss.AppendEmpty()
		sp.SetTraceID(tid)
		var sid, pid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], s.id)
		sp.SetSpanID(sid)
		if s.parent != 0 {
			binary.BigEndian.PutUint64(pid[:], s.parent)
			sp.SetParentSpanID(pid)
		}
		sp.SetName(s.name)
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.end))
		if s.err {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
		sp.Attributes().PutStr("http.route", "/api/"+s.name)
	}
	var m ptrace.ProtoMarshaler
	return m.MarshalTraces(td)
}

// measurement is one named query's latencies.
type measurement struct {
	Name     string    `json:"name"`
	URL      string    `json:"url"`
	Total    []float64 `json:"-"`
	Server   []float64 `json:"-"`
	Results  int       `json:"results"`
	P50Total float64   `json:"p50_total_ms"`
	P50Srv   float64   `json:"p50_server_ms"`
	P90Total float64   `json:"p90_total_ms"`
	Plan     string    `json:"plan"`
}

func runMeasure(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	endpoint := fs.String("endpoint", "http://127.0.0.1:4318", "otelbench serve base URL")
	n := fs.Int("n", 30, "repetitions per query")
	pid := fs.Int("pid", 0, "server pid: report its VmRSS and VmHWM")
	label := fs.String("label", "idle", "label printed with the results")
	token := fs.String("token", os.Getenv("OTELBENCH_AUTH_TOKEN"), "bearer token")
	jsonOut := fs.Bool("json", false, "print JSON lines instead of a table")
	withTrace := fs.Bool("trace", true, "also fetch the big trace")
	_ = fs.Parse(args)
	client := &http.Client{Timeout: 120 * time.Second}
	ms := []*measurement{
		{Name: "search selective (quokka)", URL: "/api/v1/logs?q=quokka&limit=100"},
		{Name: "search common (timeout)", URL: "/api/v1/logs?q=timeout&limit=100"},
	}
	if *withTrace {
		ms = append(ms, &measurement{Name: "trace 161k tree", URL: "/api/v1/traces/" + TraceID})
	}
	for rep := 0; rep < *n; rep++ {
		for _, m := range ms {
			if err := ctx.Err(); err != nil {
				return err
			}
			total, srv, plan, count, err := get(ctx, client, *endpoint+m.URL, *token)
			if err != nil {
				return err
			}
			m.Total, m.Server, m.Plan, m.Results = append(m.Total, total), append(m.Server, srv), plan, count
		}
	}
	for _, m := range ms {
		m.P50Total, m.P90Total, m.P50Srv = pct(m.Total, 0.5), pct(m.Total, 0.9), pct(m.Server, 0.5)
		if *jsonOut {
			b, _ := json.Marshal(struct {
				Label string `json:"label"`
				*measurement
			}{*label, m})
			fmt.Println(string(b))
		} else {
			fmt.Printf("%-6s %-28s p50 server %7.2f ms  p50 total %7.2f ms  p90 total %7.2f ms  results %d  plan %s\n",
				*label, m.Name, m.P50Srv, m.P50Total, m.P90Total, m.Results, m.Plan)
		}
	}
	if *pid > 0 {
		rss, hwm, err := procRSS(*pid)
		if err != nil {
			return err
		}
		fmt.Printf("%-6s server RSS now %.1f MB, peak (VmHWM) %.1f MB\n", *label, rss, hwm)
	}
	return nil
}

func get(ctx context.Context, c *http.Client, url, token string) (totalMs, serverMs float64, plan string, count int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, "", 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, "", 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Logs      []json.RawMessage `json:"logs"`
		SpanCount int               `json:"span_count"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	totalMs = float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		return 0, 0, "", 0, fmt.Errorf("%s: decode: %w", url, err)
	}
	if resp.StatusCode != 200 {
		return 0, 0, "", 0, fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	serverMs, plan = parseServerTiming(resp.Header.Get("Server-Timing"))
	count = len(body.Logs) + body.SpanCount
	return totalMs, serverMs, plan, count, nil
}

// parseServerTiming reads the server time and the plan from a
// Server-Timing header: `name;dur=12.345;desc="plan"`, or several such
// entries separated by commas. The server time is the "tree" entry when
// there is one (the trace view: fetch + decode + tree, whose parts db,
// decode and build come before it), else the first entry's; the plan is
// the first desc.
func parseServerTiming(h string) (ms float64, plan string) {
	for i, e := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(e), ";")
		var dur float64
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			switch k {
			case "dur":
				dur, _ = strconv.ParseFloat(v, 64)
			case "desc":
				if plan == "" {
					plan = strings.Trim(v, `"`)
				}
			}
		}
		if i == 0 || name == "tree" {
			ms = dur
		}
		if name == "tree" {
			break
		}
	}
	return ms, plan
}

func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

var errNoField = errors.New("field missing")

func procRSS(pid int) (rss, hwm float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	field := func(name string) (float64, error) {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, name+":") {
				f := strings.Fields(line)
				kb, err := strconv.ParseFloat(f[1], 64)
				return kb / 1024, err
			}
		}
		return 0, errNoField
	}
	if rss, err = field("VmRSS"); err != nil {
		return 0, 0, err
	}
	hwm, err = field("VmHWM")
	return rss, hwm, err
}
