package project

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/otelbench/otelbench/internal/signal"
	"github.com/otelbench/otelbench/internal/sqlitec"
)

// countLogs counts the logs rows the projector's connection sees.
func (tp *testProjection) countLogs(t *testing.T, where string, args ...any) (n int64) {
	t.Helper()
	err := tp.p.d.Conn.Do(func(c *sqlitec.Conn) (err error) {
		n, err = c.QueryInt64("SELECT count(*) FROM logs WHERE "+where, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSliceBounds: a slice stops at maxSliceRecords of weight (records plus sliceRowWeight a
// raw row), at MaxSliceBytes of payload and at the slice's rows, whichever comes first, and it
// reads only the raw rows it takes plus the one that shows more is pending, not SliceRows
// payloads of megabytes each.
func TestSliceBounds(t *testing.T) {
	oneRecord := maxSliceRecords / (1 + sliceRowWeight)
	if oneRecord >= 2048 {
		t.Fatalf("one-record slices of %d rows: the weight no longer bounds them before 2,048 rows", oneRecord)
	}
	body := strings.Repeat("x", MaxSliceBytes/3) // two fit in a slice, three do not
	tests := []struct {
		name            string
		rows, records   int
		body            string
		wantRead        int // rows the first read holds
		wantSlices      int
		wantWholeBodies bool
	}{
		// 9 rows take the records read past 8,192; one more shows the rest pending.
		{name: "1000-record rows", rows: 20, records: 1000, wantRead: 10, wantSlices: 3},
		// Rows of one record, 1,170 to a slice: each weighs sliceRowWeight records beyond its own.
		// The read takes the row whose weight passes maxSliceRecords, and one more.
		{name: "1-record rows", rows: oneRecord + 30, records: 1, wantRead: oneRecord + 2, wantSlices: 2},
		// 3 rows take the bytes read past MaxSliceBytes; one more shows the rest pending.
		{name: "MaxSliceBytes/3 rows", rows: 12, records: 1, body: body, wantRead: 4, wantSlices: 6, wantWholeBodies: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := newTestProjection(t, 2048)
			for i := range tc.rows {
				tp.appendLogs(t, "svc", cmp.Or(tc.body, fmt.Sprint("row", i, "-")), tc.records)
			}
			p := tp.p
			if err := p.load(); err != nil {
				t.Fatal(err)
			}
			if err := p.readRaw(&p.rows, nil, p.hwm, p.d.SliceRows+1, maxSliceRecords, MaxSliceBytes); err != nil {
				t.Fatal(err)
			}
			if got := len(p.rows); got != tc.wantRead {
				t.Errorf("the first read held %d rows, want %d", got, tc.wantRead)
			}
			clear(p.rows)
			if got := tp.projectAll(t); got != tc.wantSlices {
				t.Errorf("projected in %d slices, want %d", got, tc.wantSlices)
			}
			want := uint64(tc.rows * tc.records)
			if got := tp.c.projected[signal.Logs].Load(); got != want || tp.c.lagRecords.Load() != 0 {
				t.Errorf("projected %d records, lag %d; want %d, 0", got, tp.c.lagRecords.Load(), want)
			}
			if n := tp.countLogs(t, "true"); n != int64(want) {
				t.Errorf("%d logs rows, want %d", n, want)
			}
			if tc.wantWholeBodies {
				if short := tp.countLogs(t, "length(body) != ?", int64(len(body)+2)); short != 0 {
					t.Errorf("%d logs without their whole body", short)
				}
			}
		})
	}
}

// TestPrefetchReleasedWhenCaughtUp: once no slice is staged next, the stager's buffers (a whole
// slice of payloads and decoded records) are let go rather than kept in the heap, where they
// slowed the queries after a catch-up under the soft memory limit.
func TestPrefetchReleasedWhenCaughtUp(t *testing.T) {
	tp := newTestProjection(t, 2)
	for i := range 10 {
		tp.appendLogs(t, "svc", fmt.Sprintf("staged%d-", i), 50)
	}
	if got := tp.projectAll(t); got != 5 {
		t.Fatalf("projected in %d slices, want 5 (10 raw rows in slices of 2)", got)
	}
	p := tp.p
	if tp.c.prefetches.Load() == 0 || p.next == nil {
		t.Fatalf("no slice was prefetched (%d prefetches)", tp.c.prefetches.Load())
	}
	if p.next.running {
		t.Fatal("a prefetch still runs after the projector caught up")
	}
	if rows, logs := cap(p.next.rows), cap(p.next.stage.Logs); rows != 0 || logs != 0 {
		t.Errorf("caught up, the stager still holds room for %d raw rows and %d logs", rows, logs)
	}
}

// TestProjectorSliceStaysInCache: a slice that dirties more pages than the projector's page
// cache holds (2 MiB) keeps them until its commit instead of spilling them to the WAL
// mid-transaction (with 4 KiB pages: 1118 pages written, 675 of them spilled, with spilling on),
// where a spilled page that changes again is read back or rewritten in its frame, and the commit
// then recomputes the checksums of every frame after it. The page counters show it.
func TestProjectorSliceStaysInCache(t *testing.T) {
	tp := newTestProjection(t, 2048)
	// As many requests of 16 logs as one slice takes (372), each log ~650 bytes as a row: one
	// slice of ~3.5 MiB of logs rows.
	prefix := strings.Repeat("a log body of some length ", 22)
	for i := range maxSliceRecords / (16 + sliceRowWeight) {
		tp.appendLogs(t, fmt.Sprint("svc", i%5), fmt.Sprint(prefix, i), 16)
	}
	if n := tp.projectAll(t); n != 1 {
		t.Fatalf("projected in %d slices, want 1", n)
	}
	var pageSize int64
	err := tp.p.d.Conn.Do(func(c *sqlitec.Conn) (err error) {
		pageSize, err = c.QueryInt64("PRAGMA page_size")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Twice the cache's 2 MiB in pages of the file's size (8 KiB: 256 pages in the cache).
	cachePages := int64(2<<20) / pageSize
	if written, spilled := tp.c.written.Load(), tp.c.spilled.Load(); int64(written) < 2*cachePages || spilled != 0 {
		t.Errorf("projector pages: %d written, %d spilled; want more than twice the cache's %d written, none spilled",
			written, spilled, cachePages)
	}
}
