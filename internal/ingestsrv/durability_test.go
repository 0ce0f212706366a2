package ingestsrv

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	ossignal "os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/store"
)

// loadResult is what concurrent clients saw.
type loadResult struct {
	mu       sync.Mutex
	acked    []uint64 // seq of every log record answered 200
	statuses map[int]int
	errors   int
}

// loadLogs runs clients goroutines, each posting up to perClient requests of
// recs log records with unique seqs, until stop is closed. onAck runs after
// every 200.
func loadLogs(url string, clients, perClient, recs int, stop <-chan struct{}, onAck func()) *loadResult {
	return loadLogsWith(clients, perClient, recs, stop, onAck, func() (logSender, func()) {
		tr := &http.Transport{MaxIdleConnsPerHost: 1}
		client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		return func(body []byte) (int, bool, error) {
			resp, err := send(client, http.MethodPost, url+"/v1/logs", ctProto, "", bytesReader(body))
			if err != nil {
				return 0, false, err
			}
			return resp.status, resp.status == http.StatusOK, nil
		}, tr.CloseIdleConnections
	})
}

// logSender sends one request body and returns the answer's status (HTTP status or gRPC
// code), whether it acknowledged the records, or the transport error.
type logSender func(body []byte) (status int, acked bool, err error)

// loadLogsWith runs clients goroutines, each with the sender dial returns (and closes with the
// func beside it), sending up to perClient requests of recs log records with unique seqs until
// stop is closed. onAck runs after every acknowledgement.
func loadLogsWith(clients, perClient, recs int, stop <-chan struct{}, onAck func(), dial func() (logSender, func())) *loadResult {
	res := &loadResult{statuses: map[int]int{}}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			send, closeSender := dial()
			defer closeSender()
			for i := range perClient {
				select {
				case <-stop:
					return
				default:
				}
				seq := uint64(c)<<32 | uint64(i*recs)
				body, _ := otlptest.Logs(seq, recs).MarshalProto()
				status, acked, err := send(body)
				res.mu.Lock()
				if err != nil {
					res.errors++
				} else {
					res.statuses[status]++
				}
				if acked {
					for r := range recs {
						res.acked = append(res.acked, seq+uint64(r))
					}
				}
				res.mu.Unlock()
				if acked && onAck != nil {
					onAck()
				}
				if err != nil { // refused or reset: back off a little, the server is going away
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(res.acked)
	return res
}

// storedSeqs reopens the data dir and returns the seq attribute of every log
// record in the raw log (what was stored, projection aside).
func storedSeqs(t *testing.T, dir string) []uint64 {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{Dir: dir, NoProjection: true,
		Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	var seqs []uint64
	err = st.ScanRaw(func(r rawlog.Row) error {
		if r.Signal != signal.Logs {
			return nil
		}
		payload := r.Payload
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(payload); err != nil {
			return err
		}
		rls := req.Logs().ResourceLogs()
		for i := range rls.Len() {
			for _, sl := range rls.At(i).ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					v, _ := lr.Attributes().Get("seq")
					seqs = append(seqs, uint64(v.Int()))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(seqs)
	return seqs
}

// TestGracefulShutdownAccounting cancels the server while 8 clients post
// concurrently: Serve returns nil, and the records stored are exactly the
// records answered 200 (before or during shutdown) — nothing lost, nothing
// extra.
func TestGracefulShutdownAccounting(t *testing.T) {
	ts := startServer(t, Config{})
	var acks atomic.Int64
	stop := make(chan struct{})
	resCh := make(chan *loadResult, 1)
	go func() { resCh <- loadLogs(ts.url, 8, 5000, 2, stop, func() { acks.Add(1) }) }()
	polltest.Until(t, "200 acks", func() bool { return acks.Load() >= 200 })
	ts.stop(t) // cancel and wait: Serve must return nil
	close(stop)
	res := <-resCh
	stored := storedSeqs(t, ts.dir)
	t.Logf("acked %d records, stored %d; statuses %v, transport errors %d", len(res.acked), len(stored), res.statuses, res.errors)
	if !slices.Equal(stored, res.acked) {
		t.Fatalf("stored %d records, acked %d: the sets differ (first missing: %v)", len(stored), len(res.acked), firstMissing(res.acked, stored))
	}
	for status := range res.statuses {
		if status != http.StatusOK && status != http.StatusServiceUnavailable {
			t.Errorf("got status %d during shutdown, want only 200 and 503", status)
		}
	}
}

func firstMissing(want, got []uint64) any {
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			return w
		}
	}
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			return fmt.Sprintf("extra %d", g)
		}
	}
	return nil
}

// childEnv makes the test binary run a server instead of the tests (TestMain).
const childEnv = "OTELBENCH_INGESTSRV_CHILD_DIR"

// runChild serves HTTP and gRPC on 127.0.0.1:0 from dir, prints
// "addr <http host:port> <grpc host:port>", and runs until killed or, like
// cmd/otelbench, until SIGINT/SIGTERM (exit 0 after a clean drain).
func runChild(dir string) int {
	ctx, stop := ossignal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := New(ctx, Config{Config: store.Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var lns [2]net.Listener
	for i := range lns {
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("addr %s %s\n", lns[0].Addr(), lns[1].Addr())
	if err := srv.ServeWithGRPC(ctx, lns[0], lns[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild starts the test binary as a server process on dir and returns
// it with its base URL.
func startChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, _ := startChildAddrs(t, dir)
	return cmd, "http://" + addr
}

// startChildAddrs starts the test binary as a server process on dir and
// returns it with its HTTP and gRPC addresses.
func startChildAddrs(t *testing.T, dir string) (cmd *exec.Cmd, httpAddr, grpcAddr string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "addr" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	return cmd, f[1], f[2]
}

// TestSIGTERM sends SIGTERM to a child server process under concurrent
// load: it exits 0, and the records stored are exactly those answered 200.
func TestSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd, url := startChild(t, dir)
	sigtermUnderLoad(t, cmd, dir, func(stop <-chan struct{}, onAck func()) *loadResult {
		return loadLogs(url, 8, 5000, 2, stop, onAck)
	})
}

// sigtermUnderLoad runs load against the child cmd serving dir until 200
// acks, sends SIGTERM, requires exit status 0 within 60 s, and checks that
// the records stored are exactly those acknowledged. It returns what the
// clients saw.
func sigtermUnderLoad(t *testing.T, cmd *exec.Cmd, dir string, load func(stop <-chan struct{}, onAck func()) *loadResult) *loadResult {
	t.Helper()
	var acks atomic.Int64
	stop := make(chan struct{})
	resCh := make(chan *loadResult, 1)
	go func() { resCh <- load(stop, func() { acks.Add(1) }) }()
	polltest.Until(t, "200 acks", func() bool { return acks.Load() >= 200 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("child after SIGTERM: %v, want exit status 0", err)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("child did not exit within 60s of SIGTERM")
	}
	close(stop)
	res := <-resCh
	stored := storedSeqs(t, dir)
	t.Logf("acked %d records, stored %d; statuses %v, transport errors %d", len(res.acked), len(stored), res.statuses, res.errors)
	if !slices.Equal(stored, res.acked) {
		t.Fatalf("stored %d records, acked %d: the sets differ (first difference: %v)", len(stored), len(res.acked), firstMissing(res.acked, stored))
	}
	return res
}

// TestKill9 SIGKILLs a child server process under concurrent load, restarts
// on the same data dir, lets projection catch up, and finds every record
// answered 200 in the logs table.
func TestKill9(t *testing.T) {
	dir, res := kill9UnderLoad(t, 8, 5000, 3, 300)
	ts := startServer(t, Config{Config: store.Config{Dir: dir}}) // restart: the database must open cleanly
	waitProjected(t, ts.Store())
	projected := projectedSeqs(t, ts.Store())
	if missing := firstMissing(res.acked, projected); missing != nil {
		if _, extra := missing.(string); !extra {
			t.Fatalf("record %v was answered 200 but is not stored after kill -9 (acked %d, projected %d)", missing, len(res.acked), len(projected))
		}
	}
	// Requests in the commit the kill interrupted may be stored without
	// their 200 having reached the client: at most one batch more.
	if len(projected) < len(res.acked) {
		t.Fatalf("projected %d < acked %d", len(projected), len(res.acked))
	}
	if got := signal.Logs.String(); getStats(t, ts.url).Signals[got].RecordsProjected == 0 && len(projected) > 0 {
		t.Error("stats do not show the backlog projected after restart")
	}
}

// projectedSeqs returns, sorted, the seq of every log record in st's logs table (the bodies
// otlptest.Logs writes: "order <seq> placed ...").
func projectedSeqs(t *testing.T, st *store.Store) []uint64 {
	t.Helper()
	rows, err := st.ReadDB().Query("SELECT body FROM logs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	re := regexp.MustCompile(`^order (\d+) placed`)
	var projected []uint64
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("unexpected log body %q", body)
		}
		seq, _ := strconv.ParseUint(m[1], 10, 64)
		projected = append(projected, seq)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(projected)
	return projected
}

// kill9UnderLoad starts a child server on a new data directory, loads it with clients posting
// up to perClient requests of recs log records, SIGKILLs it once acks requests were answered
// 200, and returns the directory and what the clients saw.
func kill9UnderLoad(t *testing.T, clients, perClient, recs int, acks int64) (string, *loadResult) {
	t.Helper()
	dir := t.TempDir()
	cmd, url := startChild(t, dir)
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var n atomic.Int64
	stop := make(chan struct{})
	resCh := make(chan *loadResult, 1)
	go func() { resCh <- loadLogs(url, clients, perClient, recs, stop, func() { n.Add(1) }) }()
	polltest.Until(t, fmt.Sprint(acks, " acks"), func() bool { return n.Load() >= acks })
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no drain, no close
		t.Fatal(err)
	}
	killed = true
	_ = cmd.Wait()
	close(stop)
	res := <-resCh
	t.Logf("acked %d records before SIGKILL; statuses %v, transport errors %d", len(res.acked), res.statuses, res.errors)
	return dir, res
}
