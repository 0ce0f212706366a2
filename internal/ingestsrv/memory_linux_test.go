package ingestsrv

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpcodec/otlptest"
	"github.com/otelbench/otelbench/internal/racetest"
)

// maxPeakRSS is the peak resident set a server on default flags may reach
// while answering any request within --max-body, four at once included.
const maxPeakRSS = 150 << 20

// emptyGauge is a protobuf metrics request of one gauge with n empty data points.
func emptyGauge(t *testing.T, n int) []byte {
	req := pmetricotlp.NewExportRequest()
	m := req.Metrics().ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("g")
	points := m.SetEmptyGauge().DataPoints()
	for range n {
		points.AppendEmpty()
	}
	return encode(t, req, otlpcodec.EncodingProto)
}

// vmHWM reads a process's peak resident set (VmHWM) from procfs.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// TestPeakRSSUnderCostlyRequests sends a server process on default flags
// (the serve command's 40 MiB Go memory limit included) requests of
// --max-body whose cost is per record, not per byte: empty spans, which
// pdata must build before rejecting them, JSON of empty records, and empty
// log records, which the projector would have to build.
// One at a time and four at once, the process's peak RSS stays within
// maxPeakRSS; each answer is 413 or, for requests the budget can hold,
// 200 or 503.
func TestPeakRSSUnderCostlyRequests(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOMEMLIMIT", strconv.FormatInt(DefaultMemoryLimit, 10))
	cmd, url := startChild(t, dir)
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	spans := otlptest.EmptyRecords(int(DefaultMaxBody-16) / 2)
	jsonLogs := []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{}` +
		strings.Repeat(`,{}`, int(DefaultMaxBody-100)/3) + `]}]}]}`)
	if len(spans) > int(DefaultMaxBody) || len(jsonLogs) > int(DefaultMaxBody) {
		t.Fatalf("fixtures of %d and %d bytes exceed --max-body", len(spans), len(jsonLogs))
	}
	tests := []struct {
		name, path, ct string
		body           []byte
		want           []int // acceptable statuses
	}{
		{"empty spans", "/v1/traces", ctProto, spans, []int{http.StatusRequestEntityTooLarge}},
		// Valid and cheap to ingest, but each record costs the projector.
		{"empty log records", "/v1/logs", ctProto, spans, []int{http.StatusRequestEntityTooLarge}},
		{"empty log records, JSON", "/v1/logs", ctJSON, jsonLogs, []int{http.StatusRequestEntityTooLarge}},
		{"empty log records at --max-records", "/v1/logs", ctProto, otlptest.EmptyRecords(DefaultMaxRecords), []int{http.StatusOK, http.StatusServiceUnavailable}},
		{"empty gauge points at --max-records", "/v1/metrics", ctProto, emptyGauge(t, DefaultMaxRecords), []int{http.StatusOK, http.StatusServiceUnavailable}},
		{"empty spans at --max-records", "/v1/traces", ctProto, otlptest.EmptyRecords(DefaultMaxRecords), []int{http.StatusOK, http.StatusServiceUnavailable}},
	}
	client := &http.Client{Timeout: 60 * time.Second}
	for _, tt := range tests {
		for _, parallel := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/x%d", tt.name, parallel), func(t *testing.T) {
				var wg sync.WaitGroup
				statuses := make(chan int, parallel)
				for range parallel {
					wg.Go(func() {
						resp, err := send(client, http.MethodPost, url+tt.path, tt.ct, "", bytes.NewReader(tt.body))
						if err != nil {
							t.Error(err)
							return
						}
						statuses <- resp.status
					})
				}
				wg.Wait()
				close(statuses)
				for got := range statuses {
					if !slices.Contains(tt.want, got) {
						t.Errorf("status %d, want one of %v", got, tt.want)
					}
				}
				peak := vmHWM(t, cmd.Process.Pid)
				t.Logf("peak RSS so far %d MiB", peak>>20)
				if peak > maxPeakRSS && !racetest.Enabled {
					t.Errorf("peak RSS %d MiB, want at most %d MiB", peak>>20, maxPeakRSS>>20)
				}
			})
		}
	}
	if racetest.Enabled {
		return // the projector at idle priority under the race detector takes minutes
	}
	// What was stored is projected too: the projector's memory counts. It
	// runs at idle CPU priority, so on a busy machine it may take a while.
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := send(client, http.MethodGet, url+"/api/v1/stats", "", "", nil)
		if err == nil && bytes.Contains(resp.body, []byte(`"lag_records":0,`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("projection not caught up in 3 minutes: %s", resp.body)
		}
	}
	if peak := vmHWM(t, cmd.Process.Pid); peak > maxPeakRSS {
		t.Errorf("after projection: peak RSS %d MiB, want at most %d MiB", peak>>20, maxPeakRSS>>20)
	}
	t.Logf("server peak RSS %d MiB", vmHWM(t, cmd.Process.Pid)>>20)
}
