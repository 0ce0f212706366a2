// Command tinysrv is the server of compare's end-to-end tests: it answers
// OTLP/HTTP export requests with 200 and an empty body, after a delay the
// tests vary from commit to commit.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strings"
	"time"
)

const delay = 0 * time.Millisecond

func main() {
	addr := flag.String("addr", "127.0.0.1:4318", "listen address")
	flag.Parse()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
			time.Sleep(delay)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}
		w.WriteHeader(http.StatusOK)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
