package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

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

// TestProjectionBoundsBigRequests: requests of 1,000 records are projected
// 8 to a slice (maxSliceRecords), and a slice reads only the raw rows it can
// take plus the two that tell it more is pending, not ProjectSlice payloads.
func TestProjectionBoundsBigRequests(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("big%d-", i), 1000))
	}
	p := newProjector(s, s.shards[0])
	if err := p.load(); err != nil {
		t.Fatal(err)
	}
	if err := p.readRaw(&p.rows, nil, p.hwm, s.cfg.ProjectSlice+1, maxSliceRecords, maxSliceBytes); err != nil {
		t.Fatal(err)
	}
	// 9 rows take the records read past 8,192; one more shows the rest pending.
	if got := len(p.rows); got != 10 {
		t.Errorf("readRaw of 1,000-record rows held %d payloads, want 10", got)
	}
	p.close() // its stager, worker and statements, before the store
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 20000 || st.ProjectionSlices != 3 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 20000 in 3 (8+8+4 requests), lag 0",
			st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	if n := countRows(t, s, "logs"); n != 20000 {
		t.Errorf("logs rows: got %d, want 20000", n)
	}
}

// TestProjectionSlicesWeighRows: requests of one record are projected maxSliceRecords /
// (1 + sliceRowWeight) to a slice (1,170), not ProjectSlice (2,048) nor 8,192: each raw row
// weighs sliceRowWeight records beyond its own.
func TestProjectionSlicesWeighRows(t *testing.T) {
	perSlice := maxSliceRecords / (1 + sliceRowWeight)
	if perSlice >= DefaultProjectSlice {
		t.Fatalf("one-record slices of %d rows: the weight no longer bounds them before ProjectSlice (%d)", perSlice, DefaultProjectSlice)
	}
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true, Sync: SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	requests := perSlice + 30
	for i := range requests {
		appendLogs(t, s, makeLogs("svc", fmt.Sprint("one-", i), 1))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != uint64(requests) || st.ProjectionSlices != 2 {
		t.Errorf("Stats: got %d projected in %d slices; want %d in 2 (%d + 30 requests)",
			st.Logs.RecordsProjected, st.ProjectionSlices, requests, perSlice)
	}
}

// TestProjectionBoundsBigPayloads: a slice also stops at maxSliceBytes of payload, so requests
// of few but large records are projected two to a slice here, and a slice reads only the rows
// it takes plus one, instead of ProjectSlice payloads of megabytes each.
func TestProjectionBoundsBigPayloads(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	// Each payload is a little over a third of maxSliceBytes: two fit in a slice, three do not.
	body := strings.Repeat("x", maxSliceBytes/3)
	for range 12 {
		appendLogs(t, s, makeLogs("svc", body, 1))
	}
	p := newProjector(s, s.shards[0])
	if err := p.load(); err != nil {
		t.Fatal(err)
	}
	if err := p.readRaw(&p.rows, nil, p.hwm, s.cfg.ProjectSlice+1, maxSliceRecords, maxSliceBytes); err != nil {
		t.Fatal(err)
	}
	// 3 rows take the bytes read past maxSliceBytes; one more shows the rest pending.
	if got := len(p.rows); got != 4 {
		t.Errorf("readRaw of %d-byte rows held %d payloads, want 4", len(p.rows[0].Payload), got)
	}
	p.close() // its stager, worker and statements, before the store
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	if st := s.Stats(); st.Logs.RecordsProjected != 12 || st.ProjectionSlices != 6 || st.LagRecords != 0 {
		t.Errorf("Stats: got %d projected in %d slices, lag %d; want 12 in 6, lag 0",
			st.Logs.RecordsProjected, st.ProjectionSlices, st.LagRecords)
	}
	var n, short int
	if err := s.ReadDB().QueryRow(`SELECT count(*), count(*) FILTER (WHERE length(body) != ?) FROM logs`,
		len(body)+2).Scan(&n, &short); err != nil {
		t.Fatal(err)
	}
	if n != 12 || short != 0 {
		t.Errorf("logs: %d rows, %d without their whole body; want 12, 0", n, short)
	}
}

// TestProjectorSliceStaysInCache: a slice that dirties more pages than the projector's page
// cache holds (2 MiB) keeps them until its commit instead of spilling them to the WAL
// mid-transaction (with 4 KiB pages: 1118 pages written, 675 of them spilled, with spilling on), where a spilled
// page that changes again is read back or rewritten in its frame, and the commit then recomputes
// the checksums of every frame after it. The page counters in Stats show it.
func TestProjectorSliceStaysInCache(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	// As many requests of 16 logs as one slice takes (372), each log ~650 bytes as a row: one
	// slice of ~3.5 MiB of logs rows.
	prefix := strings.Repeat("a log body of some length ", 22)
	for i := range maxSliceRecords / (16 + sliceRowWeight) {
		appendLogs(t, s, makeLogs(fmt.Sprint("svc", i%5), fmt.Sprint(prefix, i), 16))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, Config{Dir: dir})
	waitProjected(t, s)
	st := s.Stats()
	if st.ProjectionSlices != 1 {
		t.Fatalf("projected in %d slices, want 1", st.ProjectionSlices)
	}
	// Twice the cache's 2 MiB in pages of the file's size (8 KiB: 256 pages in the cache).
	cachePages := int64(2<<20) / pragma(t, s.shards[0].conn, "page_size")
	if pg := st.ProjectionPages; int64(pg.Written) < 2*cachePages || pg.Spilled != 0 {
		t.Errorf("projector pages: %d written, %d spilled; want more than twice the cache's %d written, none spilled",
			pg.Written, pg.Spilled, cachePages)
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

// TestPrefetchReleasedWhenCaughtUp: once no slice is staged next, the stager's buffers (a whole
// slice of payloads and decoded records) are let go rather than kept in the heap, where they
// slowed the queries after a catch-up under the soft memory limit.
func TestPrefetchReleasedWhenCaughtUp(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Config{Dir: dir, NoProjection: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		appendLogs(t, s, makeLogs("svc", fmt.Sprintf("staged%d-", i), 50))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	type held struct{ staged, rows, logs int }
	seen := make(chan held, 100) // one per slice; 10 raw rows in slices of 2
	sliceHook = func(p *projector) {
		if p.next != nil && !p.next.running {
			seen <- held{1, cap(p.next.rows), cap(p.next.stage.Logs)}
		} else {
			seen <- held{}
		}
	}
	defer func() { sliceHook = nil }()
	s = openTest(t, Config{Dir: dir, ProjectSlice: 2, Logger: quietLogger})
	waitProjected(t, s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(seen)
	var last held
	for h := range seen {
		last = h
	}
	if s.stats.prefetches.Load() == 0 || last.staged == 0 {
		t.Fatalf("no slice was prefetched (%d prefetches)", s.stats.prefetches.Load())
	}
	if last.rows != 0 || last.logs != 0 {
		t.Errorf("caught up, the stager still holds room for %d raw rows and %d logs", last.rows, last.logs)
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

// TestPayloadArena: the buffers of one slice never overlap, a payload too big for a chunk gets
// its own, and after reset the same slice fits in the chunks the arena already has.
func TestPayloadArena(t *testing.T) {
	sizes := []int{0, 1, 2500, stage.ArenaChunk / 4, stage.ArenaChunk/4 + 1, 3000, stage.ArenaChunk, 17}
	for range 300 {
		sizes = append(sizes, 100+len(sizes)*37%5000)
	}
	var a stage.ByteArena
	fill := func() [][]byte {
		a.Reset()
		bufs := make([][]byte, len(sizes))
		for i, n := range sizes {
			b := a.Alloc(n)
			if len(b) != 0 || cap(b) != n {
				t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
			}
			bufs[i] = append(b, bytes.Repeat([]byte{byte(i)}, n)...)
		}
		for i, b := range bufs {
			if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, sizes[i])) {
				t.Fatalf("buffer %d (%d bytes) was overwritten", i, sizes[i])
			}
		}
		return bufs
	}
	first := fill()
	chunks := len(a.Chunks)
	var small int
	for _, n := range sizes {
		if n <= stage.ArenaChunk/4 {
			small += n
		}
	}
	if max := (small/(stage.ArenaChunk*3/4) + 1) + 1; chunks > max {
		t.Errorf("%d chunks for %d bytes of small payloads, want at most %d", chunks, small, max)
	}
	inChunk := func(b []byte) bool {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		for _, c := range a.Chunks {
			if start := uintptr(unsafe.Pointer(unsafe.SliceData(c))); at >= start && at < start+uintptr(cap(c)) {
				return true
			}
		}
		return false
	}
	for i, b := range first {
		if n := sizes[i]; n > 0 && (n > stage.ArenaChunk/4) == inChunk(b) {
			t.Errorf("payload %d (%d bytes): in a chunk %v", i, n, inChunk(b))
		}
	}
	fill()
	if len(a.Chunks) != chunks {
		t.Errorf("the same slice again took %d chunks, had %d", len(a.Chunks), chunks)
	}
}

// stoppedClock is a clock whose time stands still and whose waits never end.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time                       { return time.Unix(1_000_000, 0) }
func (stoppedClock) After(time.Duration) <-chan time.Time { return nil }
