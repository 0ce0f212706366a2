package query

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/query/querytest"
)

// BenchmarkLogsAttrFilter pages logs filtered by a resource or record
// attribute over 200,000 logs from 100 hosts, beside the service filter
// that an index serves. A filter matching 1 host in 100 walks the time index
// until it has a page: the figures say what an index on logs(resource_id)
// or on an attribute would save.
func BenchmarkLogsAttrFilter(b *testing.B) {
	st := querytest.OpenStore(b)
	base := time.Now().Add(-time.Hour)
	const total, hosts, per = 200_000, 100, 2_000
	for i := 0; i < total; i += per {
		logs := make([]logSpec, per)
		for j := range logs {
			n := i + j
			logs[j] = logSpec{Service: fmt.Sprintf("svc-%d", n%hosts), Sev: 9, Body: "request served", At: base.Add(time.Duration(n) * time.Millisecond),
				Resource: map[string]any{"host.name": fmt.Sprintf("node-%d", n%hosts)}, Attrs: map[string]any{"http.route": fmt.Sprintf("/r%d", n%hosts)}}
		}
		querytest.AppendLogs(b, st, logs...)
	}
	querytest.WaitProjected(b, st)
	r := NewReader(st.ReadDB())
	for _, bc := range []struct{ name, query string }{
		{"service", "service=svc-7"},
		{"resource", "resource.host.name=node-7"},
		{"attr", "attr.http.route=/r7"},
		{"unfiltered", ""},
	} {
		v, _ := url.ParseQuery(bc.query + "&limit=100")
		q, err := ParseLogQuery(v, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, _, err := r.Logs(context.Background(), q)
				if err != nil || len(p.Logs) != 100 {
					b.Fatalf("got %d logs, %v", len(p.Logs), err)
				}
			}
		})
	}
}
