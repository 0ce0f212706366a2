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
			if got := p.At(tt.n).Sub(start); got != tt.want {
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
