// Command otelbench profiles and benchmarks telemetry pipelines: it serves a
// durable OTLP ingest target, loads it, compares two versions of it and
// profiles the syscalls that burn CPU.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/otelbench/otelbench/internal/exitcode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	os.Exit(report(err))
}

// report prints err (if it carries a message) and returns the exit code: the
// one place that maps errors to exit codes.
func report(err error) int {
	code := exitcode.Code(err)
	if err != nil && err.Error() != "" {
		if e, ok := err.(*exitcode.Error); !ok || e.Err != nil {
			fmt.Fprintf(os.Stderr, "otelbench: %v\n", err)
		}
	}
	return code
}
