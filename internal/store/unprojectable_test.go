package store

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/polltest"
	"github.com/otelbench/otelbench/internal/rawlog"
	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/syncbuf"
)

// rawRowExists reports whether the raw log still holds raw row id.
func rawRowExists(t testing.TB, s *Store, id int64) bool {
	t.Helper()
	found := false
	if err := s.ScanRaw(func(r rawlog.Row) error { found = found || r.ID == id; return nil }); err != nil {
		t.Fatalf("read raw row %d: %v", id, err)
	}
	return found
}

// unprojectableCopy returns the signal, records and payload telemetry.db's unprojectable table
// holds for raw row id.
func unprojectableCopy(t testing.TB, s *Store, id int64) (sig, records int64, payload []byte) {
	t.Helper()
	err := s.ReadDB().QueryRow("SELECT signal, records, payload FROM unprojectable WHERE raw_id = ?", id).Scan(&sig, &records, &payload)
	if err != nil {
		t.Fatalf("read the unprojectable copy of raw row %d: %v", id, err)
	}
	return sig, records, payload
}

// TestUnprojectableRowKept: a raw row no decoder accepts is passed by (the rows after it are
// projected), counted as unprojectable with its records, logged once with its id, and copied
// whole into the unprojectable table, so it is kept although the raw retention has long passed
// and its segment was pruned with the rows around it; all of it holds after a reopen, which
// logs nothing again.
func TestUnprojectableRowKept(t *testing.T) {
	for _, tracesFile := range []bool{false, true} {
		t.Run(layoutName(!tracesFile), func(t *testing.T) {
			dir := t.TempDir()
			logs := &syncbuf.Buffer{}
			cfg := Config{Dir: dir, RawRetention: time.Nanosecond, TracesFile: tracesFile,
				Logger: slog.New(slog.NewTextHandler(logs, nil)), rawSegmentBytes: 4096}
			s := openTest(t, cfg)
			appendLogs(t, s, makeLogs("svc", "before", 2))
			// A payload that is no protobuf at all: the store API takes what it is given.
			if err := s.Append(context.Background(), signal.Logs, []byte{0xff, 0xff, 0xff, 0x01}, 3); err != nil {
				t.Fatal(err)
			}
			bad := s.Stats().LastRawID
			appendLogs(t, s, makeLogs("svc", "after", 4))
			waitDurable(t, s)
			last := s.Stats().LastRawID
			appendLogs(t, s, makeLogs("svc", "trigger", 1)) // its commit prunes the durable rows
			polltest.Until(t, "prune past the unprojectable row", func() bool { return s.PrunedRawID() >= last })
			waitProjected(t, s)

			if got := countRows(t, s, "logs"); got < 6 {
				t.Errorf("logs projected %d, want >= 6 (the rows after the bad one too)", got)
			}
			if rawRowExists(t, s, bad-1) || rawRowExists(t, s, bad) || rawRowExists(t, s, bad+1) {
				t.Errorf("the projected raw rows around %d are still there, want their segments pruned", bad)
			}
			checkCopy := func(when string) {
				sig, records, payload := unprojectableCopy(t, s, bad)
				if sig != int64(signal.Logs) || records != 3 || !bytes.Equal(payload, []byte{0xff, 0xff, 0xff, 0x01}) {
					t.Errorf("%s: unprojectable copy: signal %d, records %d, payload %x; want %d, 3, ffffff01", when, sig, records, payload, signal.Logs)
				}
			}
			checkCopy("after pruning")
			st := s.Stats()
			if st.Unprojectable != 1 || st.UnprojectableRecords != 3 {
				t.Errorf("unprojectable %d rows, %d records; want 1, 3", st.Unprojectable, st.UnprojectableRecords)
			}
			if got, want := st.Logs.RecordsProjected, uint64(2+4+1); got != want {
				t.Errorf("records projected %d, want %d (not the unprojectable row's)", got, want)
			}
			id := fmt.Sprintf("raw_id=%d ", bad)
			if got := strings.Count(logs.String(), id); got != 1 {
				t.Errorf("log lines naming %s: %d, want 1", id, got)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}

			logs2 := &syncbuf.Buffer{}
			cfg.Logger = slog.New(slog.NewTextHandler(logs2, nil))
			s = openTest(t, cfg)
			waitDurable(t, s)
			appendLogs(t, s, makeLogs("svc", "reopened", 1))
			checkCopy("after reopen")
			if st := s.Stats(); st.Unprojectable != 1 || st.UnprojectableRecords != 3 {
				t.Errorf("after reopen: unprojectable %d rows, %d records; want 1, 3", st.Unprojectable, st.UnprojectableRecords)
			}
			if got := strings.Count(logs2.String(), "raw_id="); got != 0 {
				t.Errorf("after reopen: %d log lines about raw rows, want 0", got)
			}
		})
	}
}
