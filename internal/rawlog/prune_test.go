package rawlog

import (
	"context"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/signal"
)

// filledLog writes 12 rows of 1,000 bytes into 4 KiB segments (three rows each) and drains the
// log, so that a test runs the writer's prune itself; it returns the log and its segments.
func filledLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	cfg.SegmentBytes = 4096
	l := openLog(t, cfg)
	appendN(t, l, signal.Logs, 12, 1000)
	if err := l.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if segs := l.Segments(); len(segs) < 3 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	return l
}

// sealedThrough returns the last id of the last sealed segment at or below mark.
func sealedThrough(l *Log, mark int64) int64 {
	segs := l.Segments()
	var through int64
	for _, sg := range segs[:len(segs)-1] {
		if sg.Last > mark {
			break
		}
		through = sg.Last
	}
	return through
}

// TestPrune: the writer deletes whole segments at or below the projected mark once past the
// retention (at once while the bound says so), the active segment only when idle.
func TestPrune(t *testing.T) {
	tests := []struct {
		name      string
		noPrune   bool
		retention time.Duration
		pruneNow  bool
		mark      int64
		idle      bool
		want      func(*Log) int64
	}{
		{"up to the mark", false, time.Nanosecond, false, 7, false, func(l *Log) int64 { return sealedThrough(l, 7) }},
		{"busy: sealed segments only", false, time.Nanosecond, false, 12, false, func(l *Log) int64 { return sealedThrough(l, 12) }},
		{"idle: the active segment too", false, time.Nanosecond, false, 12, true, func(*Log) int64 { return 12 }},
		{"young rows stay", false, time.Hour, false, 12, true, func(*Log) int64 { return 0 }},
		{"past the bound: young rows go", false, time.Hour, true, 12, true, func(*Log) int64 { return 12 }},
		{"pruning off", true, time.Nanosecond, false, 12, true, func(*Log) int64 { return 0 }},
		{"nothing projected", false, time.Nanosecond, false, 0, true, func(*Log) int64 { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := filledLog(t, Config{Prune: !tt.noPrune, Retention: tt.retention, Bound: &boundState{pruneNow: tt.pruneNow}})
			want := tt.want(l)
			l.SetProjected(tt.mark)
			w := writer{l: l}
			w.prune(tt.idle)
			if got := l.Pruned(); got != want {
				t.Errorf("pruned through %d, want %d", got, want)
			}
			if got, want := rowCount(t, l), 12-int(want); got != want {
				t.Errorf("%d rows left, want %d", got, want)
			}
		})
	}
}

// TestPruneByWriter: SetProjected wakes an idle writer, which prunes every projected segment;
// the totals since the directory was created still count the pruned rows, after a reopen too,
// and ids are never reused.
func TestPruneByWriter(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, Prune: true, Retention: time.Nanosecond, SegmentBytes: 4096}
	l := openLog(t, cfg)
	appendN(t, l, signal.Metrics, 12, 1000)
	l.SetProjected(12)
	polltest.Until(t, "idle prune", func() bool { return l.Pruned() == 12 })
	if segs := l.Segments(); len(segs) != 1 || segs[0].Last >= segs[0].First {
		t.Errorf("segments left %+v, want one empty", segs)
	}
	want := Count{Requests: 12, Records: 12, Bytes: 12000}
	if got := l.Stats().Total[signal.Metrics]; got != want {
		t.Errorf("totals: got %+v, want %+v", got, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	st := l.Stats()
	if got := st.Total[signal.Metrics]; got != want || st.Stored[signal.Metrics] != (Count{}) {
		t.Errorf("reopened: totals %+v, since Open %+v; want %+v and zero", got, st.Stored[signal.Metrics], want)
	}
	if l.Pruned() != 12 {
		t.Errorf("reopened: pruned through %d, want 12", l.Pruned())
	}
	appendN(t, l, signal.Metrics, 1, 10)
	if got := l.LastID(); got != 13 {
		t.Errorf("id after reopen %d, want 13 (ids are never reused)", got)
	}
}

// TestOpenFinishesPrune: a crash after the pruned totals were written and before their segments
// were deleted leaves segments the totals already count: Open deletes them without counting
// them twice.
func TestOpenFinishesPrune(t *testing.T) {
	dir := t.TempDir()
	l := filledLog(t, Config{Dir: dir})
	first := l.Segments()[0]
	var pt prunedTotals
	pt.add(first.Counts)
	pt.Through = first.Last
	if err := writePrunedTotals(dir, pt); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, Config{Dir: dir})
	if got := l.Pruned(); got != first.Last {
		t.Errorf("pruned through %d, want %d", got, first.Last)
	}
	if got := rowCount(t, l); got != 12-int(first.Last) {
		t.Errorf("%d rows left, want %d", got, 12-first.Last)
	}
	if got, want := l.Stats().Total[signal.Logs], (Count{Requests: 12, Records: 12, Bytes: 12000}); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
}
