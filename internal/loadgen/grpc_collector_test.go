package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpgen"
)

// A Collector with otlpreceiver and the nop exporter: $OTELBENCH_OTELCOL or
// scripts/build-otelcol.sh's output.
const (
	otelcolEnv     = "OTELBENCH_OTELCOL"
	otelcolDefault = "/tmp/otelbench-otelcol/otelcol"
)

// TestGRPCAgainstCollector loads the Collector's OTLP/gRPC receiver and
// compares the records the run counts as acknowledged with the records the
// receiver counts as accepted (its own telemetry), signal by signal.
func TestGRPCAgainstCollector(t *testing.T) {
	forGRPCClients(t, func(t *testing.T, client GRPCClient) {
		bin := os.Getenv(otelcolEnv)
		if bin == "" {
			bin = otelcolDefault
		}
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("no Collector at %s ($%s): build one with scripts/build-otelcol.sh", bin, otelcolEnv)
		}
		recv, prom := freeLoopback(t), freeLoopback(t)
		promHost, promPort, _ := net.SplitHostPort(prom)
		config := filepath.Join(t.TempDir(), "otelcol.yaml")
		yaml := fmt.Sprintf(`receivers:
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
`, recv, promHost, promPort)
		if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "--config", config)
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		waitListening(t, recv)
		waitListening(t, prom)

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

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after 30s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
