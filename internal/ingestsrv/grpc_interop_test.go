package ingestsrv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/otelcoltest"
	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// Peer binaries of the interop tests. CI installs them (see docs/grpc.md);
// elsewhere a test builds telemetrygen from the module cache without the
// network, or skips saying what is missing.
const (
	telemetrygenEnv     = "OTELBENCH_TELEMETRYGEN" // path of telemetrygen
	telemetrygenModule  = "github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen"
	telemetrygenVersion = "v0.161.0"
)

// telemetrygen returns the telemetrygen binary: $OTELBENCH_TELEMETRYGEN,
// telemetrygen on PATH, or a build from the module cache, offline.
func telemetrygen(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(telemetrygenEnv); p != "" {
		return p
	}
	if p, err := exec.LookPath("telemetrygen"); err == nil {
		return p
	}
	if testing.Short() {
		t.Skip("telemetrygen not installed and -short: not building it")
	}
	dir := t.TempDir()
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("telemetrygen not installed ($%s, PATH), and go env: %v", telemetrygenEnv, err)
	}
	// The module cache's download directory serves as a file proxy: no
	// network. Its modules were checksummed when they were downloaded.
	cmd := exec.Command("go", "install", telemetrygenModule+"@"+telemetrygenVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOSUMDB=off", "GOFLAGS=",
		"GOPROXY=file://"+filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("telemetrygen not installed ($%s, PATH) and not in the module cache: %v\n%s\n"+
			"install it: go install %s@%s", telemetrygenEnv, err, lastLines(out, 5), telemetrygenModule, telemetrygenVersion)
	}
	return filepath.Join(dir, "telemetrygen")
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestGRPCTelemetrygen runs telemetrygen with its defaults (OTLP/gRPC) but
// for the endpoint, plain text and counts, and finds every record stored.
func TestGRPCTelemetrygen(t *testing.T) {
	bin := telemetrygen(t)
	ts := startGRPCServer(t, Config{})
	tests := []struct {
		args []string
		sig  string
		want uint64
	}{
		{[]string{"traces", "--traces", "40"}, "traces", 80}, // a parent and one child span per trace
		{[]string{"logs", "--logs", "75"}, "logs", 75},
		{[]string{"metrics", "--metrics", "30"}, "metrics", 30},
	}
	for _, tt := range tests {
		t.Run(tt.sig, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append(tt.args, "--otlp-endpoint", ts.grpcAddr, "--otlp-insecure", "--rate", "0")
			if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
				t.Fatalf("telemetrygen %v: %v\n%s", args, err, lastLines(out, 10))
			}
			if got := ts.Stats().Signals[tt.sig].Records; got != tt.want {
				t.Errorf("%s: %d records stored, want %d", tt.sig, got, tt.want)
			}
		})
	}
}

// TestGRPCCollectorForwards runs a Collector whose otlp (gRPC) exporter
// forwards to the server, with its default retry and queue settings. The
// server answers UNAVAILABLE for a while in the middle of the run; every
// record still arrives, exactly once.
func TestGRPCCollectorForwards(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	recv := otelcoltest.FreeAddr(t)
	stopCollector := otelcoltest.Start(t, fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
exporters:
  otlp:
    endpoint: %s
    tls:
      insecure: true
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs: {receivers: [otlp], exporters: [otlp]}
`, recv, ts.grpcAddr))

	cc := dialRaw(t, recv)
	const requests, recs = 60, 5
	var sent []uint64
	exportOne := func(i int) {
		seq := uint64(i * recs)
		body := encode(t, otlptest.Logs(seq, recs), otlpcodec.EncodingProto)
		deadline := time.Now().Add(30 * time.Second)
		for { // the receiver may not listen yet
			_, st := export(t, cc, signal.Logs, body)
			if st.Code() == codes.OK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("collector receiver: %v", st)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for r := range recs {
			sent = append(sent, seq+uint64(r))
		}
	}
	for i := range requests / 3 {
		exportOne(i)
	}
	ts.budget.used.Add(ts.budget.max) // a burst of UNAVAILABLE + RetryInfo
	for i := requests / 3; i < 2*requests/3; i++ {
		exportOne(i)
	}
	polltest.Until(t, "UNAVAILABLE answers to the collector", func() bool {
		return ts.Stats().Transports[TransportGRPC].Rejections["queue_full"] > 0
	})
	time.Sleep(1500 * time.Millisecond)
	ts.budget.used.Add(-ts.budget.max)
	for i := 2 * requests / 3; i < requests; i++ {
		exportOne(i)
	}
	deadline := time.Now().Add(90 * time.Second)
	for ts.Stats().Signals["logs"].Records < requests*recs && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stopCollector()
	ts.stop(t)
	stored := storedSeqs(t, ts.dir)
	slices.Sort(sent)
	t.Logf("sent %d records through the collector, %d stored; %d UNAVAILABLE answers retried",
		len(sent), len(stored), ts.Stats().Transports[TransportGRPC].Rejections["queue_full"])
	if !slices.Equal(stored, sent) {
		t.Fatalf("stored %d records, sent %d: the sets differ (first difference: %v)", len(stored), len(sent), firstMissing(sent, stored))
	}
}
