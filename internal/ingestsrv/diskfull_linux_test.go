package ingestsrv

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
)

// TestDiskFull507 serves from a real 2 MiB tmpfs until it fills: every
// request is answered 200 or 507 (with a google.rpc.Status), the 200s are
// exactly what the stats count, and once space is freed ingest succeeds again.
func TestDiskFull507(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("mount tmpfs: %v (needs root and mount permission)", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 512<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{DataDir: filepath.Join(mnt, "data"), NoProjection: true})
	rng := rand.New(rand.NewPCG(1, 2))
	body := func(i int) []byte { // incompressible: the disk fills in a few hundred requests
		req := otlptest.Logs(uint64(i), 1)
		noise := make([]byte, 2048)
		for j := range noise {
			noise[j] = "0123456789abcdef"[rng.IntN(16)]
		}
		req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(fmt.Sprintf("%d %s", i, noise))
		return encode(t, req, otlpcodec.EncodingProto)
	}
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
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, post(t, nil, ts.url+"/v1/logs", ctProto, "", body(-1)), http.StatusOK)
	t.Logf("%d requests stored, %d answered 507, then 200 after freeing space", ok, full)
}
