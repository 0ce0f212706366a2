package store

import (
	"context"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/polltest"
)

// TestDurableTotalsAcrossPruneAndReopen: the totals since the data directory was created count
// every appended request, record and byte whether its raw row was pruned (counted in totals in
// the deleting transaction) or is still there (counted from raw at Open), and survive a reopen;
// the counters since Open start again at zero.
func TestDurableTotalsAcrossPruneAndReopen(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, RawRetention: time.Nanosecond, Logger: quietLogger}
	s := openTest(t, cfg)
	var bytes uint64
	for i := range 6 {
		ld := makeLogs("svc", "t", 1+i)
		b, _ := logsMarshaler.MarshalLogs(ld)
		bytes += uint64(len(b))
		appendLogs(t, s, ld)
	}
	waitDurable(t, s)
	last := s.Stats().LastRawID
	ld := makeLogs("svc", "trigger", 2)
	b, _ := logsMarshaler.MarshalLogs(ld)
	bytes += uint64(len(b))
	appendLogs(t, s, ld) // its commit prunes the six before it
	polltest.Until(t, "prune", func() bool { return s.PrunedRawID() >= last })
	waitProjected(t, s)
	want := SignalTotals{Requests: 7, Records: 1 + 2 + 3 + 4 + 5 + 6 + 2, Bytes: bytes, RecordsProjected: 23}
	if got := s.Stats().Durable.Logs; got != want {
		t.Errorf("before reopen: got %+v, want %+v", got, want)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, cfg)
	st := s.Stats()
	if got := st.Durable.Logs; got != want {
		t.Errorf("after reopen: got %+v, want %+v", got, want)
	}
	if st.Logs.Requests != 0 || st.Logs.RecordsProjected != 0 {
		t.Errorf("counters since Open: %+v, want zero", st.Logs)
	}
}
