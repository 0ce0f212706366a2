package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otelcoltest"
	"github.com/otelbench/otelbench/internal/otlpgen"
)

// TestGRPCAgainstCollector loads the Collector's OTLP/gRPC receiver and
// compares the records the run counts as acknowledged with the records the
// receiver counts as accepted (its own telemetry), signal by signal.
func TestGRPCAgainstCollector(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		recv, prom := otelcoltest.FreeAddr(t), otelcoltest.FreeAddr(t)
		promHost, promPort, _ := net.SplitHostPort(prom)
		otelcoltest.Start(t, fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
exporters:
  nop:
service:
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: %s
                port: %s
  pipelines:
    logs: {receivers: [otlp], exporters: [nop]}
    metrics: {receivers: [otlp], exporters: [nop]}
    traces: {receivers: [otlp], exporters: [nop]}
`, recv, promHost, promPort))
		otelcoltest.WaitListening(t, recv)
		otelcoltest.WaitListening(t, prom)

		rep, err := Run(context.Background(), Config{
			Protocol: ProtocolGRPC, GRPCClient: client, Endpoint: recv, Insecure: true, Requests: 600, Concurrency: 8,
			Payload: otlpgen.Config{Records: 10, PoolSize: 8},
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Totals.Errors() != 0 {
			t.Fatalf("%d requests failed (codes %v), want 0", rep.Totals.Errors(), rep.Totals.GRPCStatus)
		}
		metric := map[string]string{
			"logs":    "otelcol_receiver_accepted_log_records",
			"metrics": "otelcol_receiver_accepted_metric_points",
			"traces":  "otelcol_receiver_accepted_spans",
		}
		for sig, name := range metric {
			want := rep.Signals[sig].RecordsAcked
			var got int64
			deadline := time.Now().Add(20 * time.Second)
			for { // the receiver's counters are read through a periodic reader
				got = scrapeSum(t, "http://"+prom+"/metrics", name)
				if got >= want || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if got != want || want == 0 {
				t.Errorf("%s: collector accepted %d, load acked %d; want equal and > 0", sig, got, want)
			}
		}
	})
}

// scrapeSum returns the sum of every series of the counter name at url
// (with or without the _total suffix, which the Collector's exporter omits).
func scrapeSum(t *testing.T, url, name string) int64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		rest = strings.TrimPrefix(rest, "_total")
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return int64(sum)
}
