package kubernetes_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/buildtest"
	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/report"
)

func TestMain(m *testing.M) { buildtest.Exit(m.Run()) }

// startServe starts `otelbench serve` on a free loopback port with a fresh
// database, waits until it answers, and stops it (SIGTERM) when t ends.
func startServe(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--grpc-addr=", "--data", t.TempDir())
	log, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	url := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("serve exited: %v\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve at %s did not answer /healthz within 30 s", addr)
		}
	}
}

// serveStats is the part of GET /api/v1/stats this test reads: what serve
// answered 200 for (durably stored) and what its queries can see.
type serveStats struct {
	Signals map[string]struct {
		Requests         int64 `json:"requests"`
		Records          int64 `json:"records"`
		RecordsProjected int64 `json:"records_projected"`
	} `json:"signals"`
}

func stats(t *testing.T, url string) (requests, records, projected int64) {
	t.Helper()
	resp, err := http.Get(url + "/api/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s serveStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("decode stats: %v", err)
	}
	for _, v := range s.Signals {
		requests += v.Requests
		records += v.Records
		projected += v.RecordsProjected
	}
	return requests, records, projected
}

// TestLoadShardsScriptAgainstServe runs scripts/load-shards.sh, the local
// equivalent of the Indexed Job, with 3 shards against a real serve, and
// checks that nothing is lost: the merged report's acknowledged records are
// exactly those serve stored durably, and all become queryable.
func TestLoadShardsScriptAgainstServe(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash to run scripts/load-shards.sh")
	}
	bin := buildtest.Go(t, "../../cmd/otelbench")
	url := startServe(t, bin)
	dir := t.TempDir()
	// --concurrency bounds the requests in flight (24 in all, 8 a shard):
	// three shards on one host share serve's connection cap for one address.
	cmd := exec.Command(bash, "../../scripts/load-shards.sh", "3",
		"--endpoint", url, "--rate", "300", "--concurrency", "24", "--duration", "2s", "--records", "20")
	cmd.Env = append(os.Environ(), "OTELBENCH="+bin, "LOAD_SHARDS_DIR="+dir, "LOAD_SHARDS_START_IN=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load-shards.sh: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	merged, err := loadgen.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Shards) != 3 || merged.Config.Rate != 300 {
		t.Fatalf("got %d shards at %v req/s in total, want 3 at 300:\n%s", len(merged.Shards), merged.Config.Rate, out)
	}
	for _, s := range merged.Shards {
		if s.StartAt == nil || s.FirstSend.Before(*s.StartAt) {
			t.Errorf("shard %d/%d: first send %v, before its start %v", s.Index, s.Count, s.FirstSend, s.StartAt)
		}
	}
	if sp := report.StartSpread(merged, 0); sp.Spread > 500*time.Millisecond {
		t.Errorf("got a start spread of %v on one host, want the shards to start together", sp.Spread)
	}
	tot := merged.Totals
	requests, records, _ := stats(t, url)
	if tot.RecordsAcked == 0 || tot.RecordsAcked != records || tot.Status.S2xx != requests {
		t.Errorf("merged report acknowledges %d records in %d 2xx, serve stored %d in %d requests: want equal",
			tot.RecordsAcked, tot.Status.S2xx, records, requests)
	}
	if tot.RecordsSent != tot.RecordsAcked+20*(tot.Requests-tot.Status.S2xx) {
		t.Errorf("records sent %d, acked %d, requests %d (%d 2xx): a 2xx record unaccounted for",
			tot.RecordsSent, tot.RecordsAcked, tot.Requests, tot.Status.S2xx)
	}
	var projected int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, _, projected = stats(t, url); projected == records {
			break
		}
	}
	if projected != records {
		t.Errorf("serve made %d of %d stored records queryable", projected, records)
	}
	if !strings.Contains(string(out), "merged 3 reports") {
		t.Errorf("script output lacks the merged table:\n%s", out)
	}
}
