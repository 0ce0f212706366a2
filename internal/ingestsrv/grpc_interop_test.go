package ingestsrv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

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
	otelcolEnv          = "OTELBENCH_OTELCOL"              // a Collector with otlpreceiver and the otlp exporter
	otelcolDefault      = "/tmp/otelbench-otelcol/otelcol" // scripts/build-otelcol.sh's output
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

// otelcol returns a Collector binary with the otlp exporter, or skips.
func otelcol(t *testing.T, config string) string {
	t.Helper()
	bin := os.Getenv(otelcolEnv)
	if bin == "" {
		bin = otelcolDefault
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Collector at %s ($%s): build one with the otlp exporter (scripts/build-otelcol.sh)", bin, otelcolEnv)
	}
	if out, err := exec.Command(bin, "validate", "--config", config).CombinedOutput(); err != nil {
		t.Skipf("%s cannot run the test's pipeline (needs otlpreceiver and the otlp exporter): %v\n%s", bin, err, lastLines(out, 5))
	}
	return bin
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestGRPCCollectorForwards runs a Collector whose otlp (gRPC) exporter
// forwards to the server, with its default retry and queue settings. The
// server answers UNAVAILABLE for a while in the middle of the run; every
// record still arrives, exactly once.
func TestGRPCCollectorForwards(t *testing.T) {
	ts := startGRPCServer(t, Config{})
	recv := freeAddr(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "otelcol.yaml")
	yaml := fmt.Sprintf(`receivers:
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
`, recv, ts.grpcAddr)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := otelcol(t, config)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", config)
	cmd.Stderr = &tailWriter{max: 8 << 10}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("collector stderr (tail):\n%s", cmd.Stderr.(*tailWriter).String())
		}
	}()

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
	cancel()
	_ = cmd.Wait()
	ts.stop(t)
	stored := storedSeqs(t, ts.dir)
	slices.Sort(sent)
	t.Logf("sent %d records through the collector, %d stored; %d UNAVAILABLE answers retried",
		len(sent), len(stored), ts.Stats().Transports[TransportGRPC].Rejections["queue_full"])
	if !slices.Equal(stored, sent) {
		t.Fatalf("stored %d records, sent %d: the sets differ (first difference: %v)", len(stored), len(sent), firstMissing(sent, stored))
	}
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = w.buf[len(w.buf)-w.max:]
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.buf) }
