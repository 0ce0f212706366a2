// Command fdcount counts the open file descriptors of Linux processes, with
// the procfs stat-size fast path (Linux 6.2+) and a getdents64 fallback.
//
//	fdcount PID...                 PID COMM FDS METHOD for each process
//	fdcount --all --top 10         the ten processes holding the most fds
//	fdcount --json --watch 1s PID  one JSON line per second until Ctrl-C
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/otelbench/otelbench/internal/exitcode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	os.Exit(report(os.Stderr, err))
}

// report prints err (if it carries a message) and returns the exit code: the
// one place that maps errors to exit codes.
func report(w io.Writer, err error) int {
	if err != nil && err.Error() != "" {
		fmt.Fprintf(w, "fdcount: %v\n", err)
	}
	return exitcode.Code(err)
}
