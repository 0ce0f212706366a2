// Package otelcoltest runs a real OpenTelemetry Collector beside a test, for the interop tests of
// serve (a Collector exporting to it) and of load (load against the Collector's receiver).
package otelcoltest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The Collector binary: $OTELBENCH_OTELCOL, else scripts/build-otelcol.sh's output (otlpreceiver,
// the otlp and nop exporters).
const (
	Env     = "OTELBENCH_OTELCOL"
	Default = "/tmp/otelbench-otelcol/otelcol"
)

// Start writes config (YAML) to a file and runs the Collector with it until stop is called or the
// test ends; if the test failed, it logs the tail of the Collector's stderr. It skips the test
// when there is no Collector, or when the Collector cannot run config (a build without a
// component it names).
func Start(t testing.TB, config string) (stop func()) {
	t.Helper()
	bin := os.Getenv(Env)
	if bin == "" {
		bin = Default
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Collector at %s ($%s): build one with scripts/build-otelcol.sh", bin, Env)
	}
	path := filepath.Join(t.TempDir(), "otelcol.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &tailWriter{max: 1 << 10}
	validate := exec.Command(bin, "validate", "--config", path)
	validate.Stdout, validate.Stderr = out, out
	if err := validate.Run(); err != nil {
		t.Skipf("%s cannot run the test's pipeline: %v\n%s", bin, err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", path)
	stderr := &tailWriter{max: 8 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = sync.OnceFunc(func() {
		cancel()
		_ = cmd.Wait()
	})
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("collector stderr (tail):\n%s", stderr)
		}
	})
	return stop
}

// FreeAddr returns a loopback address nobody listens on right now, for a Collector endpoint.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// WaitListening waits until something accepts connections on addr, failing the test after 30 s
// (a liveness bound: the Collector starts in well under a second).
func WaitListening(t testing.TB, addr string) {
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
