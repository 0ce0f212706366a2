// Command sink is a discarding OTLP/HTTP endpoint for measuring load
// generators: it reads and drops every request body and answers 200 with an
// empty Export*ServiceResponse, in the request's encoding. It stores
// nothing, so the cost measured on the client side is the client's.
//
//	go run ./scripts/sink -addr 127.0.0.1:4318
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4318", "listen address")
	capture := flag.String("capture", "", "write the first request body to this file (for wrk's lua script)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *capture); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr, capture string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var requests, bytes atomic.Int64
	var captured atomic.Bool
	buf := make(chan []byte, 64)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b []byte
		select {
		case b = <-buf:
		default:
			b = make([]byte, 64<<10)
		}
		if capture != "" && captured.CompareAndSwap(false, true) {
			body, err := io.ReadAll(r.Body)
			if err == nil {
				err = os.WriteFile(capture, body, 0o644)
			}
			if err != nil {
				log.Printf("capture: %v", err)
			}
		}
		n := int64(0)
		for {
			m, err := r.Body.Read(b)
			n += int64(m)
			if err != nil {
				break
			}
		}
		select {
		case buf <- b:
		default:
		}
		requests.Add(1)
		bytes.Add(n)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "{}")
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Handler: h}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "sink listening on %s\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintf(os.Stderr, "sink: %d requests, %d bytes\n", requests.Load(), bytes.Load())
	return nil
}
