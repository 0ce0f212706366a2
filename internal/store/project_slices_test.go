package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otelbench/otelbench/internal/schema"
	"github.com/otelbench/otelbench/internal/stage"
)

// TestLagVisible checks that a projection backlog shows in Stats, in records and seconds.
func TestLagVisible(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "lag", 4))
	appendLogs(t, s, makeLogs("svc", "lag", 3))
	time.Sleep(5 * time.Millisecond) // let the backlog age (not a timing assertion)
	st := s.Stats()
	if st.LagRecords != 7 || st.LagSeconds <= 0 {
		t.Errorf("Stats with projection off: got lag %d records, %v s; want 7, > 0", st.LagRecords, st.LagSeconds)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The backlog survives a restart and is then projected away.
	s = openTest(t, Config{Dir: dir, NoProjection: true})
	if st := s.Stats(); st.LagRecords != 7 || st.LagSeconds <= 0 || st.ProjectedRawID != 0 || st.LastRawID != 2 {
		t.Errorf("Stats after reopen: got lag %d records, %v s, projected %d of %d; want 7, > 0, 0 of 2",
			st.LagRecords, st.LagSeconds, st.ProjectedRawID, st.LastRawID)
	}
}

// TestProjectionIntervalGathersTrickle: once caught up (Idle), the projector
// waits out project.GatherWait after its last slice before the next, so appends
// that trickle in meanwhile are projected together; a backlog found at start is
// projected at once, and a Close during the wait loses nothing. The clock's
// waits never end: the gather wait lasts until Close.
func TestProjectionIntervalGathersTrickle(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, Clock: stoppedClock{}})
	if err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "first", 2))
	waitProjected(t, s) // the first slice does not wait: nothing was projected before
	first := s.Stats()
	for i := range 5 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("trickle%d-", i), 1))
	}
	// The gather wait cannot have ended: nothing more may be projected, however slow
	// the machine.
	time.Sleep(200 * time.Millisecond)
	if st := s.Stats(); st.ProjectedRawID != first.ProjectedRawID || st.LagRecords != 5 {
		t.Errorf("within the interval: projected raw id %d (was %d), lag %d; want unchanged, 5",
			st.ProjectedRawID, first.ProjectedRawID, st.LagRecords)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir, Clock: stoppedClock{}})
	waitProjected(t, s) // the backlog found at start is projected without waiting
	if n := countRows(t, s, "logs"); n != 7 {
		t.Errorf("logs rows after reopen: got %d, want 7", n)
	}
}

// TestProjectedRowidsChecked: logs rows take SQLite's next rowid, which must be the id the
// projector assigned (log_text groups and span events refer to it). A row written behind the
// projector's back moves SQLite's next rowid: the slice fails its check instead of committing
// bodies indexed under other ids, and the retry assigns ids after the intruder.
func TestProjectedRowidsChecked(t *testing.T) {
	s := openTest(t, Config{Logger: quietLogger})
	appendLogs(t, s, makeLogs("svc", "before", 10))
	waitProjected(t, s)
	db, err := sql.Open("sqlite", "file:"+s.TelemetryPath()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO logs(id, raw_id, resource_id, scope_id, time_unix_nano, observed_time_unix_nano,
		severity_number) VALUES (1000, 0, 1, 1, 0, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	appendLogs(t, s, makeLogs("svc", "after", 5))
	waitProjected(t, s)
	if st := s.Stats(); st.ProjectionErrors == 0 {
		t.Error("no projection error: the slice committed rows under ids it did not assign")
	}
	ids := queryRows(t, s.ReadDB(), `SELECT min(id), max(id), count(*) FROM logs WHERE body LIKE 'after%'`)
	if got := strings.Join(ids[0], " "); got != "1001 1005 5" {
		t.Errorf("ids of the later logs (min max count): %s, want 1001 1005 5", got)
	}
	groups := queryRows(t, s.ReadDB(), `SELECT rowid FROM log_text WHERE log_text MATCH ?`, stage.TextQuery("aft"))
	if len(groups) != 1 || groups[0][0] != fmt.Sprint(1001>>schema.LogTextShift) {
		t.Errorf("log_text groups matching the later bodies: %v, want [[%d]]", groups, 1001>>schema.LogTextShift)
	}
}

// stoppedClock is a clock whose time stands still and whose waits never end.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time                       { return time.Unix(1_000_000, 0) }
func (stoppedClock) After(time.Duration) <-chan time.Time { return nil }
