package rawlog

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/crashtest"
	"github.com/otelbench/otelbench/internal/signal"
)

func TestMain(m *testing.M) {
	crashtest.RunChild(crashChildEnv, runCrashChild)
	goleak.VerifyTestMain(m)
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// openLog opens and starts a log in cfg.Dir (a fresh temporary directory if empty) and closes
// it at cleanup.
func openLog(t testing.TB, cfg Config) *Log {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	l, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	l.Start()
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// appendN appends n requests of sig with payloads of size bytes and 1 record each.
func appendN(t testing.TB, l *Log, sig signal.Signal, n, size int) {
	t.Helper()
	for range n {
		if err := l.Append(context.Background(), sig, make([]byte, size), 1); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
}

// rowCount counts the durable rows in the log.
func rowCount(t testing.TB, l *Log) int {
	t.Helper()
	var n int
	if err := l.Scan(func(Row) error { n++; return nil }); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return n
}
