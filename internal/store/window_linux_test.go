package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/racetest"
	"github.com/otelbench/otelbench/internal/selfusage"
	"github.com/otelbench/otelbench/internal/signal"
)

// hugeChildEnv makes the test binary the child of TestHugeRequestMemory: it projects one request
// of the kind named by the variable's value and prints its peak RSS.
const hugeChildEnv = "OTELBENCH_STORE_HUGE_CHILD"

// emptyRecords is an Export*ServiceRequest of sig holding n empty records: log records, or
// points of one gauge.
func emptyRecords(sig signal.Signal, n int) []byte {
	var inner []byte
	if sig == signal.Metrics {
		points := bytes.Repeat([]byte{0x0a, 0x00}, n) // Gauge.data_points, empty
		metric := protowire.AppendTag(nil, 1, protowire.BytesType)
		metric = protowire.AppendString(metric, "m")
		metric = protowire.AppendTag(metric, 5, protowire.BytesType) // Metric.gauge
		metric = protowire.AppendBytes(metric, points)
		inner = protowire.AppendTag(nil, 2, protowire.BytesType) // ScopeMetrics.metrics
		inner = protowire.AppendBytes(inner, metric)
	} else {
		inner = bytes.Repeat([]byte{0x12, 0x00}, n) // ScopeLogs.log_records, empty
	}
	scope := protowire.AppendTag(nil, 2, protowire.BytesType) // Resource*.scope_*
	scope = protowire.AppendBytes(scope, inner)
	out := protowire.AppendTag(nil, 1, protowire.BytesType) // resource_*
	return protowire.AppendBytes(out, scope)
}

// hugeChild projects one request of 2 million empty records with serve's default heap limit
// and prints the peak RSS and the rows projected.
func hugeChild(t *testing.T, sig signal.Signal) {
	debug.SetMemoryLimit(40 << 20) // ingestsrv.DefaultMemoryLimit, as serve sets it
	const n = 2_000_000
	payload := emptyRecords(sig, n)
	s := openTest(t, Config{Logger: quietLogger})
	if err := s.Append(context.Background(), sig, payload, n); err != nil {
		t.Fatal(err)
	}
	payload = nil
	polltest.Within(t, 5*time.Minute, "the huge request to be projected", func() bool {
		st := s.Stats()
		return st.ProjectedRawID == st.LastRawID
	})
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	hwm, err := selfusage.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("hwm=%d rows=%d go_sys=%d\n", hwm, projectedRecords(t, s, sig, 1), ms.Sys)
}

// TestHugeRequestMemory: one request of 2 million empty log records (4 MB of protobuf) or gauge
// points is projected, every record of it, within 300 MB of peak RSS (a child process each, so
// the peak is its own). The slice stages it a window of records at a time (project/window.go): measured
// 206 and 171 MB, of which the Go heap 66 and 43 MB; staged whole, 936 and 474 MB.
func TestHugeRequestMemory(t *testing.T) {
	if v := os.Getenv(hugeChildEnv); v != "" {
		sig, _ := strconv.Atoi(v)
		hugeChild(t, signal.Signal(sig))
		return
	}
	if testing.Short() {
		t.Skip("projects 2 million records twice")
	}
	if racetest.Enabled {
		t.Skip("the race detector's shadow memory inflates RSS")
	}
	for _, sig := range []signal.Signal{signal.Logs, signal.Metrics} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHugeRequestMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", hugeChildEnv, sig))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var hwm, rows int64
			i := bytes.Index(out, []byte("hwm="))
			if i < 0 {
				t.Fatalf("child printed no figures:\n%s", out)
			}
			if _, err := fmt.Sscanf(string(out[i:]), "hwm=%d rows=%d", &hwm, &rows); err != nil {
				t.Fatalf("child output: %v\n%s", err, out)
			}
			t.Logf("%v: peak RSS %.0f MB, %d rows (%s)", sig, float64(hwm)/1e6, rows, bytes.TrimSpace(out[i:]))
			if rows != 2_000_000 {
				t.Errorf("rows projected %d, want 2000000", rows)
			}
			if hwm > 300e6 {
				t.Errorf("peak RSS %.0f MB, want at most 300 MB", float64(hwm)/1e6)
			}
		})
	}
}
