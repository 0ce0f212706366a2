package ingestsrv

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/store"
	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestDiskFull507 serves from a real 2 MiB tmpfs until it fills: every
// request is answered 200 or 507 (with a google.rpc.Status), the 200s are
// exactly what the stats count, and once space is freed ingest succeeds again.
func TestDiskFull507(t *testing.T) {
	mnt, freeSpace := tmpfstest.MountReserved(t, "2m", 512<<10)
	ts := startServer(t, Config{Config: store.Config{Dir: filepath.Join(mnt, "data"), NoProjection: true}})
	body := noisyLogs(t, rand.New(rand.NewPCG(1, 2))) // the disk fills in a few hundred requests
	ok, full := 0, 0
	for i := 0; i < 3000 && full < 5; i++ {
		resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", body(i))
		switch resp.status {
		case http.StatusOK:
			ok++
		case http.StatusInsufficientStorage:
			full++
			if code, _, err := otlpcodec.ParseStatus(otlpcodec.EncodingProto, resp.body); err != nil || code != otlpcodec.CodeResourceExhausted {
				t.Errorf("507 body: code %d, %v", code, err)
			}
		default:
			t.Fatalf("request %d: status %d %s, want 200 or 507", i, resp.status, trim(resp.body))
		}
	}
	if full == 0 {
		t.Fatalf("the disk never filled after %d requests", ok)
	}
	st := getStats(t, ts.url)
	if st.Signals["logs"].Requests != uint64(ok) || st.Rejections["storage"] != uint64(full) {
		t.Errorf("stats: %d requests, %d storage rejections; want %d and %d", st.Signals["logs"].Requests, st.Rejections["storage"], ok, full)
	}
	freeSpace()
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body(-1)), http.StatusOK)
	t.Logf("%d requests stored, %d answered 507, then 200 after freeing space", ok, full)
}

// noisyLogs returns an encoder of one-record log requests whose ~2 KiB bodies, "<i> <random
// hex>", are incompressible.
func noisyLogs(t testing.TB, rng *rand.Rand) func(i int) []byte {
	return func(i int) []byte {
		req := otlptest.Logs(uint64(i), 1)
		noise := make([]byte, 2048)
		for j := range noise {
			noise[j] = "0123456789abcdef"[rng.IntN(16)]
		}
		req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(fmt.Sprintf("%d %s", i, noise))
		return encode(t, req, otlpcodec.EncodingProto)
	}
}

// TestMaxDiskRecovers posts a steady stream of incompressible logs, more than the disk holds,
// to a server on a real 8 MiB tmpfs with --max-disk 50%: past the bound it answers 507, and
// once retention and raw pruning have freed space it answers 200 again, without a restart;
// every request answered 200 is counted in the durable totals and projected.
func TestMaxDiskRecovers(t *testing.T) {
	mnt := tmpfstest.Mount(t, 0, "8m")
	ts := startServer(t, Config{Config: store.Config{Dir: filepath.Join(mnt, "data"), MaxDiskShare: 0.5}})
	body := noisyLogs(t, rand.New(rand.NewPCG(3, 4)))
	const want = 4 << 10 // ~9 MB acknowledged: more than the disk
	var ok, full, afterFull int
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ok < want && time.Now().Before(deadline); i++ {
		resp := post(t, nil, ts.url+"/v1/logs", ctProto, "", body(i))
		switch resp.status {
		case http.StatusOK:
			ok++
			if full > 0 {
				afterFull++
			}
		case http.StatusInsufficientStorage:
			full++
			time.Sleep(2 * time.Millisecond) // a client's back-off
		default:
			t.Fatalf("request %d: status %d %s, want 200 or 507", i, resp.status, trim(resp.body))
		}
	}
	t.Logf("%d requests answered 200 (%d after the first 507), %d answered 507", ok, afterFull, full)
	if ok < want {
		t.Errorf("%d requests answered 200 in 90 s, want %d: ingest did not recover", ok, want)
	}
	if full > 0 && afterFull == 0 {
		t.Errorf("no 200 after the first 507")
	}
	polltest.Until(t, "projection to catch up", func() bool {
		return getStats(t, ts.url).TotalsSinceCreated.Signals["logs"].RecordsProjected >= uint64(ok)
	})
	got := getStats(t, ts.url).TotalsSinceCreated.Signals["logs"]
	if got.Requests != uint64(ok) || got.Records != uint64(ok) || got.RecordsProjected != uint64(ok) {
		t.Errorf("durable totals: %d requests, %d records, %d projected; want the %d answered 200",
			got.Requests, got.Records, got.RecordsProjected, ok)
	}
}
