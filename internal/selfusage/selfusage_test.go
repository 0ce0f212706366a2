//go:build unix

package selfusage

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCPUCountsWork: spinning for 50 ms of wall time adds CPU time, and the clock never runs back.
func TestCPUCountsWork(t *testing.T) {
	c0, err := CPU()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	c1, err := CPU()
	if err != nil {
		t.Fatal(err)
	}
	if c1 <= c0 {
		t.Errorf("CPU went from %v to %v over a 50 ms spin; want it to grow", c0, c1)
	}
}

// TestPeakRSSMatchesVmHWM: on Linux the peak is VmHWM, read independently from procfs; touching
// 64 MiB puts it at least that high.
func TestPeakRSSMatchesVmHWM(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after < int64(len(buf)) {
		t.Errorf("peak RSS %d after touching 64 MiB; want at least that", after)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no procfs to cross-check: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			if d := kb<<10 - after; d < -(4<<20) || d > 4<<20 {
				t.Errorf("PeakRSS %d, VmHWM %d: want them within 4 MiB", after, kb<<10)
			}
		}
	}
	_ = buf[len(buf)-1]
}
