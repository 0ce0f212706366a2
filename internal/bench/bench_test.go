package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/otelbench/otelbench/internal/loadgen"
	"github.com/otelbench/otelbench/internal/otlpgen"
	"github.com/otelbench/otelbench/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBenchNothingLost(t *testing.T) {
	for _, tt := range []struct {
		name       string
		load       loadgen.Config
		tracesFile bool
	}{
		{"closed mixed", loadgen.Config{Duration: 2 * time.Second, Concurrency: 4}, false},
		{"closed mixed, traces file", loadgen.Config{Duration: 2 * time.Second, Concurrency: 4}, true},
		{"open json zstd", loadgen.Config{Duration: time.Second, Rate: 200, Concurrency: 8,
			Payload: otlpgen.Config{Encoding: otlpgen.EncodingJSON, Compression: otlpgen.CompressionZstd}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.load.Payload.Records = max(tt.load.Payload.Records, 20)
			tt.load.Payload.PoolSize = 4
			dir := t.TempDir()
			res, err := Run(context.Background(), Config{Load: tt.load, Store: store.Config{Dir: dir, TracesFile: tt.tracesFile}, CatchUp: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, store.TracesFileName)); (err == nil) != tt.tracesFile {
				t.Errorf("%s in the data dir: %v, want %v", store.TracesFileName, err == nil, tt.tracesFile)
			}
			var out bytes.Buffer
			if err := res.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if !res.NothingLost() || !strings.Contains(out.String(), "nothing lost") {
				t.Errorf("records lost:\n%s", out.String())
			}
			if res.Load.Totals.RecordsAcked == 0 {
				t.Fatalf("nothing acknowledged:\n%s", out.String())
			}
			if len(res.Checks) != 3 {
				t.Errorf("checked %d signals, want 3", len(res.Checks))
			}
			for _, c := range res.Checks {
				if c.RecordsStored == 0 || c.RequestsStored != c.RequestsAcked {
					t.Errorf("%s: stored %d records in %d requests, acked requests %d", c.Signal, c.RecordsStored, c.RequestsStored, c.RequestsAcked)
				}
			}
			// Projection caught up with every stored record and says what it cost in pages.
			var stored int64
			for _, c := range res.Checks {
				stored += c.RecordsStored
			}
			if p := res.Projection; p == nil || !p.CaughtUp || int64(p.Projected) != stored || p.PagesWrittenK <= 0 ||
				!strings.Contains(out.String(), "pages per 1,000 records") {
				t.Errorf("projection %+v, want caught up with all %d stored records and pages written:\n%s", p, stored, out.String())
			}
			// The catch-up's CPU: the process projects records only by spending CPU, and the
			// machine's idle and steal are fractions of its time.
			if p := res.Projection; p != nil {
				if p.MachineIdle < 0 || p.MachineIdle > 1 || p.MachineSteal < 0 || p.MachineSteal > 1 {
					t.Errorf("machine idle %v, steal %v: want fractions", p.MachineIdle, p.MachineSteal)
				}
				if p.LagAtEnd > 0 && (p.CPUSeconds <= 0 || p.CPUPerRecord() <= 0 || !strings.Contains(out.String(), "CPU while catching up")) {
					t.Errorf("a catch-up of %d records with CPU %v s, %v µs a record:\n%s", p.LagAtEnd, p.CPUSeconds, p.CPUPerRecord(), out.String())
				}
				t.Logf("lag at end %d, catch-up CPU %.3f s, machine idle %.2f, steal %.2f", p.LagAtEnd, p.CPUSeconds, p.MachineIdle, p.MachineSteal)
			}
			if res.PeakRSSBytes <= 0 || res.CPUSeconds <= 0 {
				t.Errorf("peak RSS %d, CPU %v: want both > 0", res.PeakRSSBytes, res.CPUSeconds)
			}
		})
	}
}

func TestResultReportsDifference(t *testing.T) {
	r := &Result{Load: &loadgen.Report{}, Checks: []SignalCheck{
		{Signal: "logs", RecordsAcked: 100, RecordsStored: 100},
		{Signal: "traces", RecordsAcked: 100, RecordsStored: 93},
	}}
	if r.NothingLost() || r.Err() == nil || !strings.Contains(r.Err().Error(), "7 records") {
		t.Fatalf("NothingLost %v, Err %v: want 7 records lost", r.NothingLost(), r.Err())
	}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "DIFFERENCE -7 records") || strings.Contains(out.String(), "nothing lost") {
		t.Errorf("text report:\n%s", out.String())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{Store: store.Config{Sync: "sometimes"}}).Validate(); err == nil {
		t.Error("Validate accepted sync mode sometimes")
	}
	if err := (Config{Load: loadgen.Config{Rate: -1}}).Validate(); err == nil {
		t.Error("Validate accepted a negative rate")
	}
}

// TestCatchUpDefault: the zero Config waits DefaultCatchUp, as bench
// --catch-up does by default; a negative CatchUp does not wait.
func TestCatchUpDefault(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, DefaultCatchUp},
		{-time.Second, 0},
		{5 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		c := Config{CatchUp: tt.in}
		if err := c.Validate(); err != nil {
			t.Errorf("CatchUp %v: Validate() = %v, want nil", tt.in, err)
		}
		if got := c.catchUp(); got != tt.want {
			t.Errorf("CatchUp %v: got a wait of %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestResultStoredMoreIsNotLoss(t *testing.T) {
	r := &Result{Load: &loadgen.Report{Totals: loadgen.SignalStats{Canceled: 1}}, Checks: []SignalCheck{
		{Signal: "logs", RecordsAcked: 100, RecordsStored: 110},
	}}
	if !r.NothingLost() || r.Err() != nil {
		t.Fatalf("NothingLost %v, Err %v: want no loss when more was stored", r.NothingLost(), r.Err())
	}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "DIFFERENCE +10 records") || !strings.Contains(out.String(), "10 more records stored") {
		t.Errorf("text report:\n%s", out.String())
	}
}

func TestProjectionReportsCatchUpCPU(t *testing.T) {
	p := &Projection{LagAtEnd: 1_000_000, CaughtUp: true, Seconds: 10, RecordsPerSec: 100_000, Projected: 1_200_000,
		CPUSeconds: 18, MachineIdle: 0.05, MachineSteal: 0.01}
	r := &Result{Load: &loadgen.Report{}, Projection: p}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "CPU while catching up    18.00 s (1.80 cores, 18.00 µs a record); the machine 5% idle, 1% steal"
	if !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
	// Not caught up: the records projected are those the lag lost.
	p.CaughtUp, p.LagAfterWait = false, 400_000
	if got := p.CPUPerRecord(); got != 30 {
		t.Errorf("CPUPerRecord with 600,000 of 1,000,000 projected = %v µs, want 30", got)
	}
	// No lag: nothing caught up, no CPU line.
	r.Projection = &Projection{}
	out.Reset()
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "CPU while catching up") {
		t.Errorf("a run without lag reports catch-up CPU:\n%s", out.String())
	}
}
