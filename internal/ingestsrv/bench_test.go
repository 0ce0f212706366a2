package ingestsrv

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/store"
)

// BenchmarkIngestLogs posts 10-record protobuf log requests over one
// keep-alive loopback connection to a server with no fsync and no
// projection: the cost of the HTTP ingest path itself (admission, body
// read, scan, budget, group commit of one, answer), client included.
func BenchmarkIngestLogs(b *testing.B) {
	ts := startServer(b, Config{Config: store.Config{Sync: store.SyncOff, NoProjection: true}})
	body := encode(b, otlptest.Logs(0, 10), otlpcodec.EncodingProto)
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := send(client, http.MethodPost, ts.url+"/v1/logs", ctProto, "", bytes.NewReader(body))
		if err != nil || resp.status != http.StatusOK {
			b.Fatalf("status %d, %v", resp.status, err)
		}
	}
}
