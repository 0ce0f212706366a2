//go:build linux

// Command fdholder is a benchmark workload: it holds N open file descriptors
// (dups of /dev/null) until it is signalled or its time is up, so that
// fdcount and its peers can be timed against a process of known size.
//
//	fdholder -n 19000 -pidfile /tmp/h.pid -timeout 10m &
//
// It raises its soft RLIMIT_NOFILE to the hard limit first (20,000 on the
// benchmark machine), writes its PID to -pidfile once every descriptor is
// open, and exits 0 on SIGINT/SIGTERM or after -timeout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "descriptors to hold")
	pidfile := flag.String("pidfile", "", "write the PID here when ready")
	timeout := flag.Duration("timeout", 10*time.Minute, "exit after this long")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *n, *pidfile, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "fdholder: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, n int, pidfile string, timeout time.Duration) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("setrlimit: %w", err)
		}
	}
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	for i := 1; i < n; i++ {
		if _, err := syscall.Dup(fd); err != nil {
			return fmt.Errorf("dup %d of %d (RLIMIT_NOFILE %d): %w", i, n, lim.Cur, err)
		}
	}
	if pidfile != "" {
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return fmt.Errorf("write pidfile: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	<-ctx.Done()
	return nil
}
