package bench

import (
	"testing"
	"time"
)

func TestMachineTimes(t *testing.T) {
	m0, err := machineTimes()
	if err != nil {
		t.Fatal(err)
	}
	// Burn some CPU so that the machine's total has to move (it counts in clock ticks).
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	m1, err := machineTimes()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []machineCPU{m0, m1} {
		if m.total <= 0 || m.idle < 0 || m.steal < 0 || m.idle+m.steal > m.total {
			t.Fatalf("machine times %+v: want idle and steal parts of a positive total", m)
		}
	}
	// Not idle: proc(5) says iowait, counted in it, can go backwards.
	if m1.total <= m0.total || m1.steal < m0.steal {
		t.Errorf("machine times went from %+v to %+v across 50 ms of work: want total to grow and steal not to fall", m0, m1)
	}
}
