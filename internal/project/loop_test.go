package project

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/signal"
)

// TestRunProjectsUntilCancelled runs the loop as a store does (Run, with a policy and a wake
// channel): rows appended while it waits are projected once it is woken, every slice is
// announced (Deps.Projected) and seen (Deps.AfterSlice), and Run returns once its context ends.
func TestRunProjectsUntilCancelled(t *testing.T) {
	tp := newTestProjection(t, 2)
	wake := make(chan struct{}, 1)
	projected := make(chan struct{}, 1)
	var states []State // written by the projector's goroutine, read after Run returned
	d := tp.d
	d.Wake = wake
	d.Policy = NewPolicy(Config{}, func() Reading { return Reading{LagRecords: tp.c.lagRecords.Load()} })
	d.Projected = func() {
		select {
		case projected <- struct{}{}:
		default:
		}
	}
	d.AfterSlice = func(st State) { states = append(states, st) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, d)
	}()
	const rounds, rows, records = 3, 5, 4
	for r := range rounds {
		for i := range rows {
			tp.appendLogs(t, "svc", fmt.Sprintf("round%d-%d-", r, i), records)
		}
		select {
		case wake <- struct{}{}:
		default:
		}
		last := tp.c.lastRawID.Load()
		deadline := time.After(time.Minute)
		for tp.c.projectedRawID.Load() < last {
			select {
			case <-projected:
			case <-deadline:
				cancel()
				<-done
				t.Fatalf("round %d: projected through raw id %d of %d after a minute", r, tp.c.projectedRawID.Load(), last)
			}
		}
	}
	cancel()
	<-done
	want := uint64(rounds * rows * records)
	if got, lag := tp.c.projected[signal.Logs].Load(), tp.c.lagRecords.Load(); got != want || lag != 0 {
		t.Errorf("projected %d records, lag %d; want %d, 0", got, lag, want)
	}
	if n := tp.countLogs(t, "true"); n != int64(want) {
		t.Errorf("%d logs rows, want %d", n, want)
	}
	// Slices of 2 rows: at least 3 a round.
	if slices := tp.c.slices.Load(); slices < rounds*3 || uint64(len(states)) != slices {
		t.Errorf("%d slices counted, %d seen after their commit; want at least %d, and as many seen", slices, len(states), rounds*3)
	}
	if tp.c.deferring.Load() {
		t.Error("the projector still says it defers after Run returned")
	}
}
