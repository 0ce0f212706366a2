package ingestsrv

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// loadLogsGRPC is loadLogs over gRPC: clients connections, each exporting
// up to perClient requests of recs log records with unique seqs, until stop
// is closed. Statuses are counted by gRPC code.
func loadLogsGRPC(addr string, clients, perClient, recs int, stop <-chan struct{}, onAck func()) *loadResult {
	return loadLogsWith(clients, perClient, recs, stop, onAck, func() (logSender, func()) {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodecV2(otlpgrpc.Codec{})))
		if err != nil {
			panic(err) // unreachable: a valid target and options
		}
		return func(body []byte) (int, bool, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var reply otlpgrpc.Message
			code := status.Code(cc.Invoke(ctx, otlpgrpc.Method(signal.Logs), otlpgrpc.Raw(body), &reply))
			reply.Free()
			if code != codes.OK { // refused or gone: back off a little
				time.Sleep(5 * time.Millisecond)
			}
			return int(code), code == codes.OK, nil
		}, func() { _ = cc.Close() }
	})
}

// TestGRPCSIGTERM sends SIGTERM to a child server under gRPC load: it exits
// 0, the clients see only OK and UNAVAILABLE, and the records stored are
// exactly those answered OK.
func TestGRPCSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cmd, _, addr := startChildAddrs(t, dir)
	res := sigtermUnderLoad(t, cmd, dir, func(stop <-chan struct{}, onAck func()) *loadResult {
		return loadLogsGRPC(addr, 8, 5000, 2, stop, onAck)
	})
	for code := range res.statuses {
		if c := codes.Code(code); c != codes.OK && c != codes.Unavailable {
			t.Errorf("got %v during shutdown, want only OK and UNAVAILABLE", c)
		}
	}
}

// TestGRPCKill9 SIGKILLs a child server under gRPC load and finds every
// record answered OK stored after a restart.
func TestGRPCKill9(t *testing.T) {
	dir := t.TempDir()
	cmd, _, addr := startChildAddrs(t, dir)
	var acks atomic.Int64
	stop := make(chan struct{})
	resCh := make(chan *loadResult, 1)
	go func() { resCh <- loadLogsGRPC(addr, 8, 5000, 3, stop, func() { acks.Add(1) }) }()
	polltest.Until(t, "300 acks", func() bool { return acks.Load() >= 300 })
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no drain, no close
		_ = cmd.Wait()
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(stop)
	res := <-resCh
	stored := storedSeqs(t, dir) // reopens the data dir: recovery included
	t.Logf("acked %d records before SIGKILL, %d stored after restart; codes %v", len(res.acked), len(stored), res.statuses)
	for _, seq := range res.acked {
		if _, ok := slices.BinarySearch(stored, seq); !ok {
			t.Fatalf("record %d was answered OK but is not stored after kill -9", seq)
		}
	}
}
