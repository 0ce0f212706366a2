package progress

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/syncbuf"
	"github.com/vbauerster/mpb/v8"
)

// TestDisplay draws a real display into a buffer: the elapsed line with its percentage (or
// without one for a run with no planned duration) and a counter line read at each redraw.
func TestDisplay(t *testing.T) {
	tests := []struct {
		name      string
		total     time.Duration
		wantPct   bool
		wantLines []string
	}{
		{name: "timed", total: time.Hour, wantPct: true, wantLines: []string{"elapsed", "count", "42 things"}},
		{name: "untimed", total: 0, wantLines: []string{"elapsed", "count", "42 things"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out syncbuf.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			d := start(ctx, &out, tt.total, mpb.WithAutoRefresh())
			var n atomic.Int64
			n.Store(42)
			var reads atomic.Int64
			d.Line("count", func(elapsed time.Duration) string {
				reads.Add(1)
				return strconv.FormatInt(n.Load(), 10) + " things"
			})
			deadline := time.Now().Add(10 * time.Second)
			for reads.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			d.Wait()
			got := out.String()
			for _, want := range tt.wantLines {
				if !strings.Contains(got, want) {
					t.Errorf("display lacks %q:\n%s", want, got)
				}
			}
			if hasPct := strings.Contains(got, "0%"); hasPct != tt.wantPct {
				t.Errorf("percentage shown: got %v, want %v:\n%s", hasPct, tt.wantPct, got)
			}
			if reads.Load() < 2 {
				t.Errorf("line read %d times in 10 s, want redraws", reads.Load())
			}
		})
	}
}

// TestNilWriter: no writer, no display; every method is a no-op and Wait does not block.
func TestNilWriter(t *testing.T) {
	d := Start(context.Background(), nil, time.Second)
	d.Line("x", func(time.Duration) string { t.Error("a line of no display was read"); return "" })
	d.Wait()
}

func TestPerSecond(t *testing.T) {
	tests := []struct {
		n       int64
		elapsed time.Duration
		want    float64
	}{
		{100, 2 * time.Second, 50},
		{1, 0, 1000}, // at least a millisecond
	}
	for _, tt := range tests {
		if got := PerSecond(tt.n, tt.elapsed); got != tt.want {
			t.Errorf("PerSecond(%d, %v): got %v, want %v", tt.n, tt.elapsed, got, tt.want)
		}
	}
}
