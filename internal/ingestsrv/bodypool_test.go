package ingestsrv

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// TestPooledBodiesStoredExactly posts bodies of many sizes from concurrent clients, so that
// pooled body buffers pass from request to request, and finds every payload in the raw log byte for
// byte: a buffer reused before its commit, or old bytes past a shorter body, would show.
func TestPooledBodiesStoredExactly(t *testing.T) {
	ts := startServer(t, Config{Config: store.Config{KeepRaw: true}})
	const clients, perClient = 8, 40
	// Sizes cycle from 1 to 60 records, so a pooled buffer often holds a longer body than the
	// one read into it next.
	var sent []string
	for i := range clients * perClient {
		sent = append(sent, string(encode(t, otlptest.Logs(uint64(1000*i), 1+i*7%60), otlpcodec.EncodingProto)))
	}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for _, body := range sent[c*perClient : (c+1)*perClient] {
				resp, err := send(nil, http.MethodPost, ts.url+signal.Logs.Path(), otlpcodec.EncodingProto.ContentType(), "", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				if resp.status != http.StatusOK {
					t.Errorf("status %d: %s", resp.status, trim(resp.body))
					return
				}
			}
		})
	}
	wg.Wait()
	ts.stop(t)

	db, err := store.Open(context.Background(), store.Config{Dir: ts.dir, NoProjection: true,
		Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var stored []string
	if err := db.ScanRaw(func(r rawlog.Row) error { stored = append(stored, string(r.Payload)); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(sent)
	slices.Sort(stored)
	if len(stored) != clients*perClient || !slices.Equal(sent, stored) {
		t.Fatalf("raw.db holds %d payloads, %d sent: the stored bytes differ from the sent ones", len(stored), len(sent))
	}
}
