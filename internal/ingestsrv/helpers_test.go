package ingestsrv

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/store"
)

// testServer is a real server on 127.0.0.1:0 with a real store in a temp dir.
type testServer struct {
	*Server
	url    string
	dir    string
	cancel context.CancelFunc
	done   chan error
}

func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ts, _ := startServerGRPC(t, cfg, false)
	return ts
}

// startServerGRPC is startServer with, if withGRPC, a gRPC listener on
// 127.0.0.1:0 too, whose address it returns.
func startServerGRPC(t testing.TB, cfg Config, withGRPC bool) (*testServer, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = discard()
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		_ = srv.Close(context.Background())
		t.Fatal(err)
	}
	var gln net.Listener
	if withGRPC {
		if gln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			cancel()
			ln.Close()
			_ = srv.Close(context.Background())
			t.Fatal(err)
		}
	}
	ts := &testServer{Server: srv, url: "http://" + ln.Addr().String(), dir: cfg.Dir, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- srv.ServeWithGRPC(ctx, ln, gln) }()
	t.Cleanup(func() { ts.stop(t) })
	if gln == nil {
		return ts, ""
	}
	return ts, gln.Addr().String()
}

// stop cancels the server and waits for Serve; it fails the test unless
// Serve returns nil. Safe to call twice.
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	if ts.done == nil {
		return
	}
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not return within 60s of cancel")
	}
	ts.done = nil
	http.DefaultClient.CloseIdleConnections()
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// post sends body to path with the given content type and encoding.
func post(t testing.TB, client *http.Client, url, contentType, encoding string, body []byte, hdr ...string) response {
	t.Helper()
	resp, err := send(client, http.MethodPost, url, contentType, encoding, bytes.NewReader(body), hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func send(client *http.Client, method, url, contentType, encoding string, body io.Reader, hdr ...string) (response, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// message and encode are otlptest's, by the names every test here uses.
type message = otlptest.Message

var encode = otlptest.Encode

func getStats(t testing.TB, url string, hdr ...string) Stats {
	t.Helper()
	resp, err := send(nil, http.MethodGet, url+"/api/v1/stats", "", "", nil, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != http.StatusOK {
		t.Fatalf("GET /api/v1/stats: %d %s", resp.status, resp.body)
	}
	var st Stats
	if err := json.Unmarshal(resp.body, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitProjected waits until projection has caught up with everything stored.
func waitProjected(t testing.TB, st *store.Store) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := st.Stats()
		if s.LagRecords == 0 && s.ProjectedRawID >= s.LastRawID {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("projection did not catch up in 60s: %+v", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return int(n.Int64)
}

func wantStatus(t testing.TB, resp response, want int) {
	t.Helper()
	if resp.status != want {
		t.Fatalf("status %d (%s), want %d", resp.status, trim(resp.body), want)
	}
}

func trim(b []byte) string {
	if len(b) > 200 {
		return fmt.Sprintf("%q...", b[:200])
	}
	return fmt.Sprintf("%q", b)
}

var errStop = errors.New("stop")

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
