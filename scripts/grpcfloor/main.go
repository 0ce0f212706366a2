// Command grpcfloor is the floor of OTLP/gRPC on grpc-go: a unary client or
// server that does nothing but move the bytes, to measure beside
// `otelbench load --protocol grpc` and `otelbench serve` (and their peers)
// in the same run, as scripts/bench-grpc.sh does.
//
//	grpcfloor client -endpoint 127.0.0.1:4317 -workers 8 -records 100 -duration 10s
//	grpcfloor server -addr 127.0.0.1:4317
//
// The client sends load's pre-encoded logs requests (otlpgen with load's
// default flags, -records log records) in turn from -workers goroutines, one call at a time each, over one connection per 16 workers
// (load's default), with grpc-go's defaults and the raw codec: no patching,
// no accounting, no latency histogram, no deadline. It prints the calls
// answered OK. The server answers every Export an empty response without
// looking at the message: no validation, no storage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	sig "github.com/otelbench/otelbench/internal/signal"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grpcfloor client|server [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "client":
		err = runClient(ctx, os.Args[2:])
	case "server":
		err = runServer(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: want client or server", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcfloor:", err)
		os.Exit(1)
	}
}

func runClient(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	endpoint := fs.String("endpoint", "127.0.0.1:4317", "OTLP/gRPC host:port (plain text)")
	workers := fs.Int("workers", 8, "goroutines, one call at a time each")
	records := fs.Int("records", 100, "log records a request")
	duration := fs.Duration("duration", 10*time.Second, "stop after this long")
	_ = fs.Parse(args)
	// load's payloads with its default flags (cmd/otelbench/load.go),
	// taken in turn; never patched.
	pool, err := otlpgen.NewPool(otlpgen.Config{Records: *records, Attrs: otlpgen.DefaultAttrs, BodyBytes: otlpgen.DefaultBodyBytes,
		ErrorRate: otlpgen.DefaultErrorRate, LogTraceShare: otlpgen.DefaultLogTraceShare, Seed: 1}, sig.Logs)
	if err != nil {
		return fmt.Errorf("build payloads: %w", err)
	}
	payloads := pool.Payloads(sig.Logs)
	var bytes int
	for _, p := range payloads {
		bytes += len(p.Body)
	}
	conns := make([]*grpc.ClientConn, (*workers+15)/16)
	for i := range conns {
		if conns[i], err = grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return fmt.Errorf("grpc client for %s: %w", *endpoint, err)
		}
		defer conns[i].Close()
	}
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	method, codec := otlpgrpc.Method(sig.Logs), grpc.ForceCodecV2(otlpgrpc.Codec{})
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range *workers {
		cc := conns[w%len(conns)]
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				var reply otlpgrpc.Message
				body := payloads[i%len(payloads)].Body
				if err := cc.Invoke(ctx, method, otlpgrpc.Raw(body), &reply, codec); err != nil {
					failed.Add(1)
					continue
				}
				reply.Free()
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Printf("ok %d records %d failed %d; bodies of %d bytes on average\n", ok.Load(), ok.Load()*int64(*records), failed.Load(), bytes/len(payloads))
	return nil
}

func runServer(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:4317", "listen address")
	_ = fs.Parse(args)
	gs := grpc.NewServer(grpc.ForceServerCodecV2(otlpgrpc.Codec{}))
	for _, s := range sig.All() {
		gs.RegisterService(otlpgrpc.ServiceDesc(s, otlpgrpc.Discard), nil)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		gs.GracefulStop()
		if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return err
		}
		return nil
	}
}
