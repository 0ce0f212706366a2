package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestMaxDiskRecovers writes a steady stream of incompressible logs into a real 8 MiB tmpfs
// with the data directory bounded to half of it, far more than the disk holds: retention and
// raw pruning must keep freeing space, so appends that fail with ErrDiskFull (if the bound does
// not keep the disk from filling) are followed by appends that succeed, without a reopen, and
// the durable totals count every acknowledged record.
func TestMaxDiskRecovers(t *testing.T) {
	mnt := tmpfstest.Mount(t, 0, "8m")
	dir := filepath.Join(mnt, "data")
	s, err := Open(context.Background(), Config{Dir: dir, MaxDiskShare: 0.5, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	rng := rand.New(rand.NewPCG(5, 6))
	payload := func(i int64) []byte {
		_, b := noisyLogs(t, rng, fmt.Sprintf("%d ", i))
		return b
	}
	// Acknowledged payloads of more than twice the disk: retention and raw pruning must free
	// space again and again. The loop ends on the count; the time bound is only a safety net
	// against a store that never recovers, far above what a loaded machine takes.
	const want = 4 << 10
	const safety = 4 * time.Minute // under go test's default 10-minute timeout, with the package's other tests
	var acked, full, afterFull, maxUsed int64
	lastAcked := int64(-1)
	start := time.Now()
	for i := int64(0); acked < want; i++ {
		if time.Since(start) > safety {
			t.Fatalf("after %v only %d of %d appends were acked (%d ErrDiskFull, %d after the first): "+
				"the store did not recover from a full disk", safety, acked, want, full, afterFull)
		}
		err := s.Append(context.Background(), signal.Logs, payload(i), 1)
		switch {
		case err == nil:
			acked, lastAcked = acked+1, i
			if full > 0 {
				afterFull++
			}
		case errors.Is(err, ErrDiskFull):
			full++
			time.Sleep(2 * time.Millisecond) // as a client backs off on 507
		default:
			t.Fatalf("append %d: %v, want nil or ErrDiskFull", i, err)
		}
		if i%64 == 0 {
			maxUsed = max(maxUsed, dirBytes(t, dir))
		}
	}
	t.Logf("appends: %d acked, %d ErrDiskFull in %v", acked, full, time.Since(start).Round(time.Millisecond))
	polltest.Until(t, "projection to catch up", func() bool { return s.Stats().LagRecords == 0 })
	st := s.Stats()
	t.Logf("%d appends acked (%d after the first ErrDiskFull), %d ErrDiskFull; directory peaked at %d KiB of 8192; "+
		"retention deleted %d rows; %d commits and %d projection slices failed",
		acked, afterFull, full, maxUsed>>10, st.RetentionDeleted, st.CommitErrors, st.ProjectionErrors)
	if full > 0 && afterFull == 0 {
		t.Errorf("no append succeeded after the first ErrDiskFull")
	}
	if full == 0 && maxUsed > 4<<20+4<<20/4 {
		t.Errorf("no ErrDiskFull, yet the directory reached %d KiB, past its bound of 4096", maxUsed>>10)
	}
	if got := st.Durable.Logs.Records; got != uint64(acked) {
		t.Errorf("durable log records: got %d, want the %d acked", got, acked)
	}
	if got := st.Durable.Logs.RecordsProjected; got != uint64(acked) {
		t.Errorf("projected log records: got %d, want the %d acked", got, acked)
	}
	var newest string
	if err := s.ReadDB().QueryRow(`SELECT body FROM logs ORDER BY rowid DESC LIMIT 1`).Scan(&newest); err != nil {
		t.Fatalf("read the newest log: %v", err)
	}
	if prefix := fmt.Sprintf("%d ", lastAcked); !strings.HasPrefix(newest, prefix) {
		t.Errorf("newest log body %.20q, want the last acked append's, %q...", newest, prefix)
	}
}

// dirBytes returns the bytes the files of dir occupy on disk.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
	}
	return n
}
