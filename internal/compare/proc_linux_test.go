package compare

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestClockTicks(t *testing.T) {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		t.Skipf("getconf: %v", err)
	}
	var want float64
	if _, err := fmt.Sscan(string(out), &want); err != nil {
		t.Fatalf("parse getconf output %q: %v", out, err)
	}
	if got := clockTicks(); got != want {
		t.Errorf("clockTicks() = %v, want %v (getconf CLK_TCK)", got, want)
	}
}

// TestProcSampler samples a real child that burns CPU and holds memory and
// files, and checks each reading against what the child did.
func TestProcSampler(t *testing.T) {
	p, err := newProcSampler("")
	if err != nil {
		t.Fatal(err)
	}
	self, err := p.sample(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PeakRSS <= 0 || self.FDs < 3 {
		t.Errorf("sample(self) = %+v, want peak RSS > 0 and at least 3 fds", self)
	}
	// A shell that busy-loops on builtins for a while: CPU time must grow.
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done; sleep 5`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	before, err := p.cpuSeconds(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		now, err := p.cpuSeconds(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("CPU seconds of a busy child never grew past %v", before)
}
