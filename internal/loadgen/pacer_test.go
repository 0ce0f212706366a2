package loadgen

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock whose Sleep advances time at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	slept  []time.Duration
	onWake func() // called after each Sleep, e.g. to cancel a context
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	c.mu.Unlock()
	if c.onWake != nil {
		c.onWake()
	}
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestPacerSchedule(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rate float64
		n    int64
		want time.Duration // offset of send n from start
	}{
		{"first send at start", 100, 0, 0},
		{"100/s tenth", 100, 10, 100 * time.Millisecond},
		{"3/s no drift", 3, 300, 100 * time.Second},
		{"fractional rate", 0.5, 3, 6 * time.Second},
		{"high rate", 1e6, 1_000_000, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPacer(&fakeClock{now: start}, start, tt.rate)
			if at := p.At(tt.n); at.Sub(start) != tt.want {
				got := at.Sub(start)
				t.Errorf("At(%d) = start+%v, want start+%v", tt.n, got, tt.want)
			}
		})
	}
}

func TestPacerWaitOnTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: start}
	p := NewPacer(clk, start, 1000) // one send per millisecond
	for n := range int64(5) {
		intended, late, err := p.Wait(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		if want := start.Add(time.Duration(n) * time.Millisecond); !intended.Equal(want) || !clk.Now().Equal(want) {
			t.Fatalf("send %d: intended %v, clock %v, want both %v", n, intended, clk.Now(), want)
		}
		if late != 0 {
			t.Errorf("send %d: late %v, want 0", n, late)
		}
	}
	// The first send needs no sleep, the next four one millisecond each.
	if len(clk.slept) != 4 {
		t.Errorf("slept %v, want four 1ms sleeps", clk.slept)
	}
}

func TestPacerWaitBehindSchedule(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: start}
	p := NewPacer(clk, start, 100)     // every 10ms
	clk.advance(55 * time.Millisecond) // a stall: sends 0..5 are due
	for n, wantLate := range []time.Duration{55, 45, 35, 25, 15, 5} {
		intended, late, err := p.Wait(context.Background(), int64(n))
		if err != nil {
			t.Fatal(err)
		}
		if late != wantLate*time.Millisecond {
			t.Errorf("send %d intended %v: late %v, want %v", n, intended.Sub(start), late, wantLate*time.Millisecond)
		}
	}
	if len(clk.slept) != 0 {
		t.Errorf("slept %v while behind schedule, want no sleep", clk.slept)
	}
	// Send 6 is due at 60ms: back on schedule after a 5ms sleep.
	if _, late, _ := p.Wait(context.Background(), 6); late != 0 || len(clk.slept) != 1 || clk.slept[0] != 5*time.Millisecond {
		t.Errorf("send 6: late %v, slept %v, want on time after 5ms", late, clk.slept)
	}
}

func TestPacerWaitCanceled(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	clk := &fakeClock{now: start, onWake: cancel}
	p := NewPacer(clk, start, 10)
	if _, _, err := p.Wait(ctx, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel = %v, want context.Canceled", err)
	}
	if _, _, err := p.Wait(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on canceled ctx = %v, want context.Canceled", err)
	}
}

// TestStagedPacer: the ramps of "2s:100,3s:100,2s:0" place the sends where the integral of the
// rate reaches them: 100 in the first ramp (its mean rate is 50/s), 300 in the hold, 100 in
// the ramp down, and none after.
func TestStagedPacer(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stages, err := ParseStages("2s:100,3s:100,2s:0")
	if err != nil {
		t.Fatal(err)
	}
	p := NewStagedPacer(&fakeClock{now: start}, start, stages)
	tests := []struct {
		n    int64
		want time.Duration
		ok   bool
	}{
		{0, 0, true},
		{25, time.Second, true},              // ramp up: 100/2 × t²/2 = 25 at t = 1s
		{100, 2 * time.Second, true},         // end of the ramp up
		{250, 3500 * time.Millisecond, true}, // hold at 100/s
		{400, 5 * time.Second, true},         // start of the ramp down
		{475, 6 * time.Second, true},         // 100t - 25t² = 75 at t = 1s
		{500, 0, false},                      // the schedule's 500 sends are 0..499
	}
	for _, tt := range tests {
		at, ok := p.Due(tt.n)
		got := at.Sub(start)
		if ok != tt.ok || (ok && (got-tt.want).Abs() > time.Microsecond) {
			t.Errorf("Due(%d) = start+%v, %v; want start+%v, %v", tt.n, got, ok, tt.want, tt.ok)
		}
	}
	// Wait on the fake clock walks the schedule: every send waits for its time, and the one
	// past the end says so.
	clock := &fakeClock{now: start}
	p = NewStagedPacer(clock, start, stages)
	for n := range int64(500) {
		at, late, err := p.Wait(context.Background(), n)
		if err != nil || late != 0 || !clock.Now().Equal(at) {
			t.Fatalf("Wait(%d) = %v, %v, %v at clock %v", n, at.Sub(start), late, err, clock.Now().Sub(start))
		}
	}
	if _, _, err := p.Wait(context.Background(), 500); !errors.Is(err, ErrScheduleEnd) {
		t.Errorf("Wait(500) error %v, want ErrScheduleEnd", err)
	}
	if got := clock.Now().Sub(start); got > 7*time.Second || got < 6*time.Second {
		t.Errorf("the fake clock ended at +%v, want within the 7 s schedule, after 6 s", got)
	}
}

func TestParseStagesRejects(t *testing.T) {
	for _, s := range []string{"", "30s", "x:10", "30s:-1", "0s:10", "10s:0,5s:0", "10s:abc"} {
		if _, err := ParseStages(s); err == nil {
			t.Errorf("ParseStages(%q) = nil error, want one", s)
		}
	}
}
