package project

import (
	"runtime"
	"testing"
	"time"
)

// TestMachineRead reads the real /proc/stat and thread clock: burning CPU on this thread
// advances both the thread's time and the machine's busy time.
func TestMachineRead(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := Machine{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	if before.Busy <= 0 || before.Total < before.Busy || before.Self < 0 {
		t.Fatalf("implausible cpu times %+v", before)
	}
	const burn = 300 * time.Millisecond
	var after CPUTimes
	deadline := time.Now().Add(20 * time.Second)
	for {
		if after, err = (Machine{}).Read(); err != nil {
			t.Fatal(err)
		}
		if after.Self-before.Self >= burn || time.Now().After(deadline) {
			break
		}
	}
	if got := after.Self - before.Self; got < burn {
		t.Fatalf("thread cpu time advanced %v in 20 s of spinning, want >= %v", got, burn)
	}
	// /proc/stat counts in ticks of 10 ms; 300 ms of CPU is at least 20 of them.
	if got := after.Busy - before.Busy; got < burn-100*time.Millisecond {
		t.Errorf("machine busy time advanced %v while this thread used %v", got, after.Self-before.Self)
	}
	if after.Total-before.Total < after.Busy-before.Busy {
		t.Errorf("total advanced less than busy: %+v -> %+v", before, after)
	}
}
