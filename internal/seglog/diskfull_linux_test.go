package seglog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelbench/otelbench/internal/tmpfstest"
)

// TestDiskFull fills a real 1 MiB tmpfs: each Write either succeeds and its records are there
// after reopening, or fails with ErrDiskFull and leaves the file valid; once space is freed,
// writes succeed again with the next ids.
func TestDiskFull(t *testing.T) {
	mnt := tmpfstest.Mount(t, 0, "1m")
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dir: filepath.Join(mnt, "log"), SegmentBytes: 128 << 10}
	l := openLog(t, cfg)
	var last int64
	diskFull := 0
	for i := 0; i < 2000 && diskFull < 10; i++ {
		batch := []Entry{entryOf(last + 1), entryOf(last + 2), entryOf(last + 3)}
		for j := range batch {
			batch[j].Payload = append(batch[j].Payload, make([]byte, 4000)...)
		}
		_, l3, err := l.Write(batch)
		switch {
		case err == nil:
			last = l3
		case errors.Is(err, ErrDiskFull):
			diskFull++
		default:
			t.Fatalf("write %d: got %v, want nil or ErrDiskFull", i, err)
		}
	}
	if diskFull == 0 {
		t.Fatalf("the disk never filled after %d records", last)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	_, l1, err := l.Write([]Entry{entryOf(last + 1)})
	if err != nil || l1 != last+1 {
		t.Fatalf("write after freeing space: got id %d, %v; want %d, nil", l1, err, last+1)
	}
	last = l1
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, cfg)
	defer l.Close()
	if got := l.Durable(); got != last {
		t.Fatalf("after reopen: got last id %d, want %d", got, last)
	}
	r := l.NewReader()
	defer r.Close()
	var after int64
	for after < last {
		rows, through, err := r.Read(after, Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if string(row.Payload[:len(payloadOf(row.ID))]) != string(payloadOf(row.ID)) {
				t.Fatalf("row %d: payload differs", row.ID)
			}
		}
		after = through
	}
	t.Logf("%d records written, %d writes refused for space", last, diskFull)
}
